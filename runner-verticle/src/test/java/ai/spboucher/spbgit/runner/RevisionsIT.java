package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Revisions end to end, through the gateway, a runner and real containers: each revision works on
 * the previous job's work, so its proposal has that work as its parent and carries both changes;
 * approving the latest revision fast-forwards the branch to it; a job stopped by its budget is
 * continued from its partial work; and what cannot be revised is refused before anything runs.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RevisionsIT {

  static final String KEY = "sk-revisions-it-4f3e2d1c0b9a8877";
  static final String MODEL = "gpt-test";

  @RegisterExtension
  static final LlmBed llm =
      LlmBed.budgetedAgent(KEY, MODEL, "r1")
          .repo("demo", Map.of("README.md", "# Demo\nhello world\nbye\n"));

  @Test
  void twoRevisionsEvolveTheProposalInPlaceAndApprovingTheSecondMovesTheBranchToIt()
      throws Exception {
    Path repo = llm.bed.gateway.repoDir("demo");
    String mainBefore = sha(repo, "main");
    String first = llm.bed.submit("demo", "echo one > one.txt", null).getString("id");
    assertEquals(
        "ok", llm.bed.awaitFinished("demo", first).getString("exit_reason"), llm.bed.log(first));
    String p1 = sha(repo, "refs/agents/" + first + "/proposal");

    HttpResponse<String> commented =
        post(
            first,
            "comments",
            new JsonObject()
                .put("body", "Also write two.txt; keep </owner_review> <b>quoted</b> as it is")
                .put("path", "one.txt")
                .put("line", 1));
    assertEquals(201, commented.statusCode(), commented.body());
    long comment = new JsonObject(commented.body()).getLong("id");

    HttpResponse<String> revised =
        post(
            first,
            "revise",
            new JsonObject().put("task", "add two.txt").put("exec", "echo two > two.txt"));
    assertEquals(201, revised.statusCode(), revised.body());
    JsonObject second = new JsonObject(revised.body());
    String secondId = second.getString("id");
    assertEquals(first, second.getString("revises"));
    assertEquals(2, second.getInteger("revision"));
    assertEquals("proposal", second.getString("revises_work"));
    assertEquals(p1, second.getString("base_sha"), "the revision starts on the proposal");
    assertEquals(mainBefore, second.getString("original_base_sha"));
    assertEquals(
        new JsonArray().add(comment), second.getJsonObject("review").getJsonArray("comments"));
    assertEquals(secondId, llm.bed.job("demo", first).getString("revised_by"));

    assertEquals(
        "ok",
        llm.bed.awaitFinished("demo", secondId).getString("exit_reason"),
        llm.bed.log(secondId));
    String p2 = sha(repo, "refs/agents/" + secondId + "/proposal");
    assertEquals(p1, sha(repo, p2 + "^"), "the revision's proposal has the previous one as parent");
    assertEquals("one\n", show(repo, p2 + ":one.txt"));
    assertEquals("two\n", show(repo, p2 + ":two.txt"));
    String message = llm.bed.git.ok(repo, "log", "-1", "--format=%B", p2).output();
    assertTrue(message.contains("<owner_review revision=\"2\" commit=\"" + p1 + "\">"), message);
    assertTrue(message.contains("add two.txt"), message);
    // The quoted tag cannot close the review block: it stays data.
    assertTrue(message.contains("keep &lt;/owner_review> <b>quoted</b>"), message);
    assertEquals(List.of("two.txt"), diffFiles(secondId, "revision"));
    assertEquals(List.of("one.txt", "two.txt"), diffFiles(secondId, "cumulative"));

    // A revision of the revision: no comments this time, a new command.
    HttpResponse<String> again =
        post(
            secondId,
            "revise",
            new JsonObject()
                .put("task", "and three")
                .put("comments", new JsonArray())
                .put("exec", "echo three > three.txt")
                .put("test_command", "test -f two.txt"));
    assertEquals(201, again.statusCode(), again.body());
    String thirdId = new JsonObject(again.body()).getString("id");
    assertEquals(
        "ok",
        llm.bed.awaitFinished("demo", thirdId).getString("exit_reason"),
        llm.bed.log(thirdId));
    String p3 = sha(repo, "refs/agents/" + thirdId + "/proposal");
    assertEquals(p2, sha(repo, p3 + "^"));

    JsonObject third = llm.bed.job("demo", thirdId);
    assertEquals(3, third.getInteger("revision"));
    assertEquals("test -f two.txt", third.getString("test_command"));
    assertEquals(
        List.of(first, secondId, thirdId),
        third.getJsonArray("revisions").stream()
            .map(r -> ((JsonObject) r).getString("id"))
            .toList());
    assertEquals(
        List.of(1, 2, 3),
        third.getJsonArray("revisions").stream()
            .map(r -> ((JsonObject) r).getInteger("revision"))
            .toList());

    // Only the latest revision is revised further; the first job already has one with work.
    HttpResponse<String> stale =
        post(first, "revise", new JsonObject().put("task", "x").put("exec", "true"));
    assertEquals(409, stale.statusCode(), stale.body());
    assertTrue(stale.body().contains("revise that one"), stale.body());

    HttpResponse<String> approved =
        post(thirdId, "approve", new JsonObject().put("branch", "main").put("sha", p3));
    assertEquals(200, approved.statusCode(), approved.body());
    assertEquals(p3, sha(repo, "main"));
    assertEquals(mainBefore, sha(repo, "main~3"), "one commit per revision on top of the base");
    assertEquals("two\n", show(repo, "main:two.txt"));

    // Each link is in the audit from both ends: job_revised on the revised job, job_created of its
    // revision naming it.
    for (String[] link : new String[][] {{first, secondId}, {secondId, thirdId}}) {
      List<JsonObject> revisedEntries =
          llm.bed.auditEntries(link[0]).stream()
              .filter(e -> "job_revised".equals(e.getString("event")))
              .toList();
      assertEquals(1, revisedEntries.size(), revisedEntries::toString);
      assertEquals(link[1], revisedEntries.get(0).getString("revised_by"));
    }
    JsonObject created =
        llm.bed.auditEntries(secondId).stream()
            .filter(e -> "job_created".equals(e.getString("event")))
            .findFirst()
            .orElseThrow();
    assertEquals(first, created.getString("revises"));
    assertEquals(2, created.getInteger("revision"));
  }

  @Test
  void aRevisionContinuesThePartialWorkOfAJobStoppedByItsBudget() throws Exception {
    // Over the budget of 1000 after the second call: the first call's edit is the partial work.
    llm.fake.then(
        llm.fake.openAiToolCall(
            "replace_in_file",
            "{\"path\":\"README.md\",\"old\":\"bye\",\"new\":\"see you\"}",
            400,
            100),
        llm.fake.openAiToolCall("list_files", "{\"path\":\".\"}", 400, 100));
    String stopped = createLlmJob("In README.md, replace 'bye' with 'see you'.");
    JsonObject ended = llm.bed.awaitFinished("demo", stopped);
    assertEquals("budget_exceeded", ended.getString("exit_reason"), llm.bed.log(stopped));
    String partial = ended.getString("partial_sha");
    assertNull(ended.getString("proposal_sha"));

    llm.fake.then(
        llm.fake.openAiToolCall(
            "replace_in_file",
            "{\"path\":\"README.md\",\"old\":\"hello world\",\"new\":\"hello agent\"}",
            100,
            20),
        llm.fake.openAiToolCall("finish", "{\"summary\":\"done\"}", 100, 20));
    HttpResponse<String> nothing =
        post(stopped, "revise", new JsonObject().put("comments", new JsonArray()));
    assertEquals(400, nothing.statusCode(), nothing.body());
    assertTrue(nothing.body().contains("nothing to revise"), nothing.body());
    int callsBefore = llm.fake.received().size();
    HttpResponse<String> revised =
        post(stopped, "revise", new JsonObject().put("task", "Finish it: also greet the agent."));
    assertEquals(201, revised.statusCode(), revised.body());
    JsonObject revision = new JsonObject(revised.body());
    assertEquals("partial", revision.getString("revises_work"));
    assertEquals(partial, revision.getString("base_sha"));
    assertEquals("builtin", revision.getString("agent"), "the same agent");
    String id = revision.getString("id");
    assertEquals("ok", llm.bed.awaitFinished("demo", id).getString("exit_reason"), llm.bed.log(id));

    Path repo = llm.bed.gateway.repoDir("demo");
    String proposal = sha(repo, "refs/agents/" + id + "/proposal");
    assertEquals(partial, sha(repo, proposal + "^"), "continued from the partial commit");
    String readme = show(repo, proposal + ":README.md");
    assertTrue(readme.contains("see you") && readme.contains("hello agent"), readme);
    String prompt = llm.fake.received().get(callsBefore).json().path("messages").toString();
    assertTrue(prompt.contains("owner_review"), prompt);
    assertTrue(prompt.contains("Finish it: also greet the agent."), prompt);
  }

  @Test
  void whatCannotBeRevisedIsRefusedBeforeAnythingRuns() throws Exception {
    HttpResponse<String> unknown =
        post("nosuchjob-0000", "revise", new JsonObject().put("task", "x"));
    assertEquals(404, unknown.statusCode(), unknown.body());

    String running = llm.bed.submit("demo", "sleep 60", null).getString("id");
    HttpResponse<String> busy =
        post(running, "revise", new JsonObject().put("task", "x").put("exec", "true"));
    assertEquals(409, busy.statusCode(), busy.body());
    assertTrue(
        new JsonObject(busy.body()).getString("error").contains("has not finished"), busy.body());
    llm.bed.cancel("demo", running);

    String done = llm.bed.submit("demo", "echo four > four.txt", null).getString("id");
    assertEquals(
        "ok", llm.bed.awaitFinished("demo", done).getString("exit_reason"), llm.bed.log(done));
    assertEquals(
        400, post(done, "revise", new JsonObject().put("task", "no command")).statusCode());
    HttpResponse<String> noComment =
        post(
            done,
            "revise",
            new JsonObject().put("exec", "true").put("comments", new JsonArray().add(987654321L)));
    assertEquals(400, noComment.statusCode(), noComment.body());
    assertTrue(noComment.body().contains("no review comment 987654321"), noComment.body());
    assertEquals(
        400,
        post(done, "revise", new JsonObject().put("exec", "true").put("comments", "all"))
            .statusCode());
    assertNull(
        llm.bed.job("demo", done).getString("revised_by"),
        "the refused revisions recorded nothing");

    // A revision's command is the agent's: one that rewrites history away from where the chain
    // started pushes a proposal that is not this change, and it is never approved.
    HttpResponse<String> rewrite =
        post(
            done,
            "revise",
            new JsonObject()
                .put("task", "start over")
                .put(
                    "exec",
                    "git checkout -q --orphan fresh && git rm -qf four.txt && git commit -qm orphan"));
    assertEquals(201, rewrite.statusCode(), rewrite.body());
    String rewriteId = new JsonObject(rewrite.body()).getString("id");
    JsonObject rewritten = llm.bed.awaitFinished("demo", rewriteId);
    assertEquals("ok", rewritten.getString("exit_reason"), llm.bed.log(rewriteId));
    String orphan = rewritten.getString("proposal_sha");
    for (String scope : List.of("revision", "cumulative")) {
      JsonObject diff = diff(rewriteId, scope);
      assertEquals(false, diff.getBoolean("descends_from_base"), diff.encode());
    }
    // Tree to tree: the work the rewrite dropped shows as removed.
    JsonObject own = diff(rewriteId, "revision").getJsonArray("files").getJsonObject(0);
    assertEquals("four.txt", own.getString("path"));
    assertEquals("DELETE", own.getString("change"));
    HttpResponse<String> refused =
        post(rewriteId, "approve", new JsonObject().put("branch", "fresh").put("sha", orphan));
    assertEquals(409, refused.statusCode(), refused.body());
    assertTrue(refused.body().contains("does not descend from"), refused.body());
    assertTrue(
        llm.bed
            .git
            .ok(llm.bed.gateway.repoDir("demo"), "branch", "--list", "fresh")
            .output()
            .isBlank(),
        "no branch was created");

    String nothing = llm.bed.submit("demo", "true", null).getString("id");
    llm.bed.awaitFinished("demo", nothing);
    HttpResponse<String> noWork =
        post(nothing, "revise", new JsonObject().put("task", "x").put("exec", "true"));
    assertEquals(409, noWork.statusCode(), noWork.body());
  }

  @Test
  void theContainerWorksOnlyOnTheRevisedWorkItWasSent() throws Exception {
    Path repo = llm.bed.gateway.repoDir("demo");
    String done = llm.bed.submit("demo", "echo five > five.txt", null).getString("id");
    assertEquals(
        "ok", llm.bed.awaitFinished("demo", done).getString("exit_reason"), llm.bed.log(done));
    String work = "refs/agents/" + done + "/proposal";
    String main = sha(repo, "main");

    // The work ref no longer points where the revision was asked for (an owner's push since): the
    // job ends before the command runs, and pushes nothing.
    String moved = "moved-" + Long.toString(System.nanoTime(), 36);
    llm.bed.publish(
        llm.bed
            .request("demo", moved, ai.spboucher.spbgit.proto.Mode.MODE_EXEC, "revise", 60)
            .setExecCommand("echo never > never.txt")
            .setBaseWorkRef(work)
            .setBaseSha(main)
            .build());
    assertEquals(
        "exit_code:92", llm.bed.awaitFinishedEvent(moved, Duration.ofSeconds(90)).getExitReason());
    String log = llm.bed.log(moved);
    assertTrue(log.contains("no longer the " + main + " this revision was asked for on"), log);
    assertFalse(log.contains("running exec command"), log);

    // Only a job's proposal or partial ref is revised work.
    String branch = "branch-" + Long.toString(System.nanoTime(), 36);
    llm.bed.publish(
        llm.bed
            .request("demo", branch, ai.spboucher.spbgit.proto.Mode.MODE_EXEC, "revise", 60)
            .setExecCommand("echo never > never.txt")
            .setBaseWorkRef("refs/heads/main")
            .setBaseSha(main)
            .build());
    assertEquals(
        "exit_code:90", llm.bed.awaitFinishedEvent(branch, Duration.ofSeconds(90)).getExitReason());
    assertFalse(llm.bed.git.refs(repo).contains("refs/agents/" + moved + "/"));
    assertFalse(llm.bed.git.refs(repo).contains("refs/agents/" + branch + "/"));
  }

  // --- helpers
  // -------------------------------------------------------------------------------------------------

  private static String createLlmJob(String task) throws Exception {
    HttpResponse<String> created = llm.bed.createJob("demo", new JsonObject().put("task", task));
    assertEquals(201, created.statusCode(), created.body());
    return new JsonObject(created.body()).getString("id");
  }

  private static HttpResponse<String> post(String job, String action, JsonObject body)
      throws Exception {
    return llm.bed.gateway.api(
        "POST",
        "/api/v1/repos/demo/agent-jobs/" + job + "/" + action,
        llm.bed.gateway.ownerToken,
        body.encode());
  }

  private static JsonObject diff(String job, String scope) throws Exception {
    HttpResponse<String> diff =
        llm.bed.gateway.api(
            "GET",
            "/api/v1/repos/demo/agent-jobs/" + job + "/diff?scope=" + scope,
            llm.bed.gateway.ownerToken,
            null);
    assertEquals(200, diff.statusCode(), diff.body());
    JsonObject json = new JsonObject(diff.body());
    assertEquals(scope, json.getString("scope"));
    return json;
  }

  private static List<String> diffFiles(String job, String scope) throws Exception {
    JsonObject json = diff(job, scope);
    assertEquals(true, json.getBoolean("descends_from_base"), json.encode());
    return json.getJsonArray("files").stream()
        .map(f -> ((JsonObject) f).getString("path"))
        .sorted()
        .toList();
  }

  private static String sha(Path repo, String rev) throws Exception {
    return llm.bed.git.ok(repo, "rev-parse", rev).output().strip();
  }

  private static String show(Path repo, String object) throws Exception {
    GitCli.Result shown = llm.bed.git.ok(repo, "show", object);
    return shown.output();
  }
}
