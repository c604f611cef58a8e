package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigTest {

  @TempDir Path tmp;

  @Test
  void fileIsInXdgConfigHomeElseHomeDotConfig() {
    assertEquals(
        tmp.resolve("xdg/spbgit/config.json"),
        Config.file(Map.of("XDG_CONFIG_HOME", tmp.resolve("xdg").toString(), "HOME", "/nowhere")));
    assertEquals(
        Path.of("/home/o/.config/spbgit/config.json"), Config.file(Map.of("HOME", "/home/o")));
    assertEquals(
        Path.of("/home/o/.config/spbgit/config.json"),
        Config.file(Map.of("HOME", "/home/o", "XDG_CONFIG_HOME", "relative/dir")),
        "a relative XDG dir is ignored");
  }

  @Test
  void environmentOverridesTheFileFieldByField() throws Exception {
    Path file = tmp.resolve("config.json");
    new Config("http://file.example:8080", "file-token").write(file);
    assertEquals(
        new Config("http://file.example:8080", "file-token"), Config.resolve(Map.of(), file));
    assertEquals(
        new Config("http://env.example", "file-token"),
        Config.resolve(Map.of("SPB_URL", "http://env.example/"), file));
    assertEquals(
        new Config("http://file.example:8080", "env-token"),
        Config.resolve(Map.of("SPB_TOKEN", "env-token", "SPB_URL", " "), file),
        "a blank variable is unset");
  }

  @Test
  void missingFileIsNoConfiguration() {
    Config config = Config.resolve(Map.of(), tmp.resolve("absent.json"));
    assertNull(config.url());
    assertNull(config.token());
    CliException e = assertThrows(CliException.class, config::requireUrl);
    assertEquals(ExitCode.AUTH, e.exitCode());
  }

  @Test
  void writtenFileIsPrivateAndReplacesTheOldOne() throws Exception {
    Path file = tmp.resolve("a/spbgit/config.json");
    new Config("http://one", "t1").write(file);
    new Config("http://two", "t2").write(file);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    assertEquals(
        "rwx------",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(file.getParent())));
    assertEquals(new Config("http://two", "t2"), Config.resolve(Map.of(), file));
    assertFalse(Files.exists(file.resolveSibling("config.json.tmp")));
  }

  @Test
  void brokenFileOrUrlIsAConfigurationError() throws Exception {
    Path file = tmp.resolve("config.json");
    Files.writeString(file, "{not json");
    assertEquals(
        ExitCode.USAGE,
        assertThrows(CliException.class, () -> Config.resolve(Map.of(), file)).exitCode());
    assertEquals(
        ExitCode.USAGE,
        assertThrows(
                CliException.class,
                () -> Config.resolve(Map.of("SPB_URL", "gateway:8080"), tmp.resolve("none")))
            .exitCode());
  }

  @Test
  void tokenNeverShowsInToString() {
    assertFalse(new Config("http://x", "secret-value").toString().contains("secret-value"));
    assertTrue(new Config("http://x", "secret-value").toString().contains("***"));
  }
}
