package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.StatusChange;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SetupFactsTest {

  @TempDir Path work;

  @Test
  void readsTheSetupContainersListOnceAndRemovesIt() throws Exception {
    Files.writeString(
        work.resolve(SetupFacts.CHANGES_FILE), " M .npmrc\n?? node_modules/\n\n?? \u001b[31mred\n");
    SetupFacts facts = new SetupFacts();
    facts.readChanges(work);
    assertEquals(List.of(" M .npmrc", "?? node_modules/", "?? [31mred"), facts.setupChanges());
    assertFalse(Files.exists(work.resolve(SetupFacts.CHANGES_FILE)));
    StatusChange finished = facts.finished().build();
    assertEquals(facts.setupChanges(), finished.getSetupChangesList());
  }

  @Test
  void readsAtMostAHundredBoundedLines() throws Exception {
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 500; i++) {
      many.append("?? file-").append(i).append('\n');
    }
    Files.writeString(work.resolve(SetupFacts.CHANGES_FILE), many);
    SetupFacts facts = new SetupFacts();
    facts.readChanges(work);
    assertEquals(SetupFacts.MAX_CHANGES, facts.setupChanges().size());

    Files.writeString(work.resolve(SetupFacts.CHANGES_FILE), "?? " + "y".repeat(100_000) + "\n");
    facts.readChanges(work);
    assertEquals(1, facts.setupChanges().size());
    assertEquals(SetupFacts.MAX_CHANGE_CHARS, facts.setupChanges().get(0).length());
  }

  @Test
  void neverFollowsALinkTheSetupContainerLeftInsteadOfTheList() throws Exception {
    Path secret = Files.writeString(work.resolve("outside-secret"), "root:secret\n");
    Files.createSymbolicLink(work.resolve(SetupFacts.CHANGES_FILE), secret);
    SetupFacts facts = new SetupFacts();
    facts.readChanges(work);
    assertEquals(List.of(), facts.setupChanges());
    assertTrue(Files.exists(secret), "the link's target is left alone");
    assertFalse(
        Files.exists(
            work.resolve(SetupFacts.CHANGES_FILE), java.nio.file.LinkOption.NOFOLLOW_LINKS));
  }

  @Test
  void aFifoInsteadOfTheListDoesNotBlockTheRunner() throws Exception {
    Path fifo = work.resolve(SetupFacts.CHANGES_FILE);
    Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assertTrue(mkfifo.waitFor(10, TimeUnit.SECONDS));
    SetupFacts facts = new SetupFacts();
    facts.readChanges(work);
    assertEquals(List.of(), facts.setupChanges());
  }

  @Test
  void aHitCarriesItsKeyAndProducerIntoStarted() {
    SetupFacts facts = new SetupFacts();
    facts.hit("k", "job-1", "abc");
    StatusChange started = facts.started().build();
    assertEquals("k", started.getCacheKey());
    assertEquals("job-1", started.getCacheProducerJob());
    assertEquals("abc", started.getCacheProducerCommit());
  }
}
