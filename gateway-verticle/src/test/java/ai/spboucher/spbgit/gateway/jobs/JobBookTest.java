package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class JobBookTest {

  private static JsonObject e(String event, String job) {
    return new JsonObject().put("event", event).put("job", job).put("ts", "2026-11-29T00:00:00Z");
  }

  private static JsonObject created(String job) {
    return e(JobBook.CREATED, job)
        .put("repo", "demo")
        .put("task", "t")
        .put("exec", "true")
        .put("base", "main")
        .put("token_id", "jti-" + job)
        .put("token_expires", "2026-11-29T01:00:00Z")
        .put("deadline", "2026-11-29T00:40:00Z");
  }

  @Test
  void replaysALifecycle() {
    JobBook book =
        JobBook.replay(
            List.of(
                created("a"),
                e(JobBook.DISPATCHED, "a").put("queue_seq", 7),
                e(JobBook.STARTED, "a").put("runner", "r1").put("container", "c1"),
                e(JobBook.REFS_WRITTEN, "a")
                    .put(
                        "refs",
                        new JsonArray().add(new JsonObject().put("ref", "refs/agents/a/p"))),
                e(JobBook.FINISHED, "a").put("exit_reason", "ok")));
    Job job = book.get("a").get();
    assertEquals("finished", job.status());
    assertEquals("ok", job.exitReason());
    assertEquals("r1", job.runnerId());
    assertEquals("c1", job.containerId());
    assertEquals(7, job.queueSequence());
    assertEquals("refs/agents/a/p", job.refsWritten().get(0).getString("ref"));
  }

  @Test
  void refusalsOfAJobsRequestChangeNothingWhereverTheyFallInTheLog() {
    List<JsonObject> lifecycle =
        List.of(
            created("a"),
            e(JobBook.DISPATCHED, "a").put("queue_seq", 7),
            e(JobBook.STARTED, "a").put("runner", "r1").put("container", "c1"),
            e(JobBook.FINISHED, "a").put("exit_reason", "ok"));
    Job plain = JobBook.replay(lifecycle).get("a").get();
    for (int at = 1; at <= lifecycle.size(); at++) {
      List<JsonObject> entries = new java.util.ArrayList<>(lifecycle);
      entries.add(at, e(JobBook.REFUSED, "a").put("runner", "r2").put("reason", "not signed"));
      assertEquals(plain, JobBook.replay(entries).get("a").get(), "refused after entry " + at);
    }
  }

  @Test
  void supersedesOnlyUndecidedAttemptsOfAGroup() {
    JobBook book =
        JobBook.replay(
            List.of(
                created("a").put("group", "g"),
                created("b").put("group", "g"),
                created("c").put("group", "g"),
                created("lone"),
                e(JobBook.REJECTED, "c").put("approver", "owner"),
                e(JobBook.APPROVED, "a").put("branch", "agent/a").put("sha", "s1"),
                e(JobBook.SUPERSEDED, "b").put("superseded_by", "a").put("approver", "owner"),
                e(JobBook.SUPERSEDED, "c").put("superseded_by", "a").put("approver", "owner"),
                // A replayed duplicate changes nothing.
                e(JobBook.SUPERSEDED, "b").put("superseded_by", "x")));
    assertEquals(List.of("a", "b", "c"), book.group("g").stream().map(Job::id).toList());
    assertEquals("g", book.get("a").get().group());
    assertEquals(null, book.get("lone").get().group());
    JsonObject superseded = book.get("b").get().decision();
    assertEquals("superseded", superseded.getString("decision"));
    assertEquals("a", superseded.getString("superseded_by"));
    assertEquals("owner", superseded.getString("by"));
    assertEquals("rejected", book.get("c").get().decision().getString("decision"));
    assertEquals("approved", book.get("a").get().decision().getString("decision"));
  }

  @Test
  void replaysReviewCommentsInOrderOnceEachAndLeavesTheJobAsItWas() {
    JsonObject onLine =
        e(JobBook.REVIEW_COMMENT, "a")
            .put("seq", 3)
            .put("commit", "c1")
            .put("kind", "proposal")
            .put("path", "README.md")
            .put("side", "new")
            .put("line", 2)
            .put("body", "<b>not bold</b>")
            .put("author", "pat1");
    JsonObject summary =
        e(JobBook.REVIEW_COMMENT, "a").put("seq", 4).put("commit", "c1").put("body", "ok");
    JobBook book =
        JobBook.replay(
            List.of(
                created("a"),
                onLine,
                summary,
                onLine,
                e(JobBook.REVIEW_COMMENT, "nobody").put("seq", 5).put("body", "x")));
    List<JsonObject> comments = book.comments("a");
    assertEquals(2, comments.size(), comments.toString());
    assertEquals(3L, comments.get(0).getLong("id"));
    assertEquals("README.md", comments.get(0).getString("path"));
    assertEquals(2, comments.get(0).getInteger("line"));
    assertEquals("<b>not bold</b>", comments.get(0).getString("body"));
    assertEquals("ok", comments.get(1).getString("body"));
    assertEquals("queued", book.get("a").get().status());
    assertTrue(book.comments("nobody").isEmpty());
  }

  @Test
  void keepsTheEnvironmentFromCreationAndTheImageDigestAndCacheFromTheStart() {
    JsonObject environment =
        new JsonObject().put("image", "python").put("hash", "h").put("blob", "b");
    JobBook book =
        JobBook.replay(
            List.of(
                created("a").put("image", "python").put("environment", environment),
                e(JobBook.DISPATCHED, "a").put("queue_seq", 1)));
    Job waiting = book.get("a").get();
    assertEquals(
        "a runner offering image 'python'", waiting.toJson(WorkShas.NONE).getString("waiting_for"));
    book.apply(
        e(JobBook.STARTED, "a")
            .put("runner", "r1")
            .put("image_digest", "sha256:d")
            .put("cache", "miss"));
    JsonObject job = book.get("a").get().toJson(WorkShas.NONE);
    assertEquals(environment, job.getJsonObject("environment"));
    assertEquals("sha256:d", job.getString("image_digest"));
    assertEquals("miss", job.getString("cache"));
    assertEquals(null, job.getValue("waiting_for"));
  }

  @Test
  void recordsTheRestoredCachesProducerAtTheStartAndWhatSetupLeftAtTheEnd() {
    JobBook book = JobBook.replay(List.of(created("a"), e(JobBook.DISPATCHED, "a")));
    assertEquals(null, book.get("a").get().toJson(WorkShas.NONE).getValue("setup"));
    book.apply(
        e(JobBook.STARTED, "a")
            .put("cache", "hit")
            .put("cache_key", "k1")
            .put("cache_producer", new JsonObject().put("job", "p1").put("commit", "c1")));
    book.apply(
        e(JobBook.FINISHED, "a")
            .put("exit_reason", "ok")
            .put("cache_note", "not cached: 5 bytes over the limit")
            .put("setup_changes", new JsonArray().add(" M .npmrc").add("?? node_modules/")));
    JsonObject setup = book.get("a").get().toJson(WorkShas.NONE).getJsonObject("setup");
    assertEquals("k1", setup.getString("cache_key"));
    assertEquals(
        new JsonObject().put("job", "p1").put("commit", "c1"),
        setup.getJsonObject("cache_producer"));
    assertEquals("not cached: 5 bytes over the limit", setup.getString("cache_note"));
    assertEquals(
        new JsonArray().add(" M .npmrc").add("?? node_modules/"),
        setup.getJsonArray("setup_changes"));
  }

  @Test
  void aJobRecordedBeforeEnvironmentsWaitsForTheBaseImage() {
    JobBook book =
        JobBook.replay(List.of(created("a"), e(JobBook.DISPATCHED, "a").put("queue_seq", 1)));
    JsonObject job = book.get("a").get().toJson(WorkShas.NONE);
    assertEquals(null, job.getValue("environment"));
    assertEquals("a runner offering image 'base'", job.getString("waiting_for"));
  }

  @Test
  void lateAndDuplicateEventsDoNotMoveAJobBackwards() {
    JobBook book =
        JobBook.replay(
            List.of(
                created("a"),
                e(JobBook.FINISHED, "a").put("exit_reason", "cancelled"),
                e(JobBook.STARTED, "a").put("runner", "late"),
                e(JobBook.FINISHED, "a").put("exit_reason", "ok")));
    Job job = book.get("a").get();
    assertEquals("cancelled", job.exitReason());
    assertEquals(null, job.runnerId());
  }

  @Test
  void ignoresEntriesForUnknownJobsAndListsNewestFirst() {
    JobBook book =
        JobBook.replay(List.of(e(JobBook.STARTED, "ghost"), created("a1"), created("b2")));
    assertTrue(book.get("ghost").isEmpty());
    assertEquals(List.of("b2", "a1"), book.list("demo").stream().map(Job::id).toList());
    assertEquals(2, book.unfinished().size());
  }

  @Test
  void listsEachRefOnceWithItsLatestUpdateAndAtMostTheRefLimitHoweverMuchWasWritten() {
    List<JsonObject> entries = new java.util.ArrayList<>(List.of(created("a")));
    for (int push = 0; push < 50; push++) {
      JsonArray refs = new JsonArray();
      for (int i = 0; i < 100; i++) {
        refs.add(
            new JsonObject()
                .put("ref", "refs/agents/a/flood-" + push + "-" + i)
                .put("old", "0".repeat(40))
                .put("new", "1".repeat(40))
                .put("token_id", "jti-a"));
      }
      entries.add(e(JobBook.REFS_WRITTEN, "a").put("refs", refs));
    }
    entries.add(
        e(JobBook.REFS_WRITTEN, "a")
            .put(
                "refs",
                new JsonArray()
                    .add(
                        new JsonObject()
                            .put("ref", "refs/agents/a/proposal")
                            .put("old", "0".repeat(40))
                            .put("new", "2".repeat(40)))
                    .add(
                        new JsonObject()
                            .put("ref", "refs/agents/a/proposal")
                            .put("old", "2".repeat(40))
                            .put("new", "3".repeat(40)))));

    List<JsonObject> listed = JobBook.replay(entries).get("a").get().refsWritten();

    assertEquals(JobBook.MAX_REFS_LISTED, listed.size());
    assertEquals(
        new JsonObject()
            .put("ref", "refs/agents/a/proposal")
            .put("old", "2".repeat(40))
            .put("new", "3".repeat(40)),
        listed.get(listed.size() - 1));
    assertEquals("refs/agents/a/flood-49-99", listed.get(listed.size() - 2).getString("ref"));
    assertTrue(listed.stream().noneMatch(r -> r.containsKey("token_id")));
  }

  private static JsonObject revision(String job, String revises, int number) {
    return created(job)
        .put("revises", revises)
        .put("revises_work", "proposal")
        .put("revision", number)
        .put("original_base_sha", "base0")
        .put("review", new JsonObject().put("text", "more").put("comments", new JsonArray()));
  }

  @Test
  void linksRevisionsBothWaysAndListsTheChainFromAnyOfItsJobs() {
    JobBook book =
        JobBook.replay(
            List.of(
                created("a").put("base_sha", "base0"),
                revision("b", "a", 2),
                e(JobBook.REVISED, "a").put("revised_by", "b"),
                revision("c", "b", 3),
                // A replayed log may hold an entry twice: nothing moves backwards.
                e(JobBook.REVISED, "a").put("revised_by", "b"),
                revision("c", "b", 3)));
    assertEquals("b", book.get("a").get().revisedBy());
    assertEquals("c", book.get("b").get().revisedBy(), "the revision's own entry links it back");
    assertEquals(null, book.get("c").get().revisedBy());
    for (String id : List.of("a", "b", "c")) {
      assertEquals(
          List.of("a", "b", "c"),
          book.revisions(book.get(id).get()).stream().map(Job::id).toList(),
          "the chain seen from " + id);
    }
    Job c = book.get("c").get();
    assertEquals("refs/agents/b/proposal", c.revision().workRef());
    assertEquals("base0", c.originalBaseSha());
    assertEquals("base0", book.get("a").get().originalBaseSha(), "a first job's own base");
    assertEquals(3, c.toJson(WorkShas.NONE).getInteger("revision"));
    assertEquals(1, book.get("a").get().toJson(WorkShas.NONE).getInteger("revision"));
  }

  @Test
  void aJobRevisedAgainAfterARevisionWithoutWorkLinksTheNewestAndKeepsTheAbandonedOneApart() {
    JobBook book =
        JobBook.replay(
            List.of(
                created("a"),
                revision("b1", "a", 2),
                e(JobBook.REVISED, "a").put("revised_by", "b1"),
                revision("b2", "a", 2),
                e(JobBook.REVISED, "a").put("revised_by", "b2"),
                // An older link replayed late does not take the place of the newer one.
                e(JobBook.REVISED, "a").put("revised_by", "b1")));
    assertEquals("b2", book.get("a").get().revisedBy());
    assertEquals(
        List.of("a", "b2"), book.revisions(book.get("a").get()).stream().map(Job::id).toList());
    assertEquals(
        List.of("a", "b1"), book.revisions(book.get("b1").get()).stream().map(Job::id).toList());
  }
}
