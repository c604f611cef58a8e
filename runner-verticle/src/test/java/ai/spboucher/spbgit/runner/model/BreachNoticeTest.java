package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BreachNoticeTest {

  @TempDir Path tmp;

  @Test
  void writesTheFirstBreachOnceForTheAgentToRead() throws Exception {
    BreachNotice notice = BreachNotice.create(tmp.resolve("notice"), 2_000_000_000);
    assertEquals(Optional.empty(), notice.reason());
    assertEquals(
        PosixFilePermissions.fromString("rwxr-xr-x"), Files.getPosixFilePermissions(notice.dir()));

    assertTrue(notice.write("budget_exceeded"));
    assertFalse(notice.write("timeout"), "the first breach wins");

    Path file = notice.dir().resolve(BreachNotice.FILE);
    assertEquals("budget_exceeded\n", Files.readString(file));
    assertEquals(Optional.of("budget_exceeded"), notice.reason());
    assertEquals(PosixFilePermissions.fromString("rw-r--r--"), Files.getPosixFilePermissions(file));
    assertEquals(
        java.util.List.of(BreachNotice.FILE),
        Files.list(notice.dir()).map(p -> p.getFileName().toString()).toList(),
        "no temporary file is left");
    if ("root".equals(System.getProperty("user.name"))) {
      assertEquals(
          2_000_000_000,
          (Integer) Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS),
          "given by number to a uid no account has");
      assertEquals(
          2_000_000_000, (Integer) Files.getAttribute(file, "unix:gid", LinkOption.NOFOLLOW_LINKS));
    }
  }

  @Test
  void deleteRemovesTheDirectory() throws Exception {
    BreachNotice notice = BreachNotice.create(tmp.resolve("notice"), 2_000_000_000);
    notice.write("timeout");
    notice.delete();
    assertFalse(Files.exists(notice.dir()));
  }
}
