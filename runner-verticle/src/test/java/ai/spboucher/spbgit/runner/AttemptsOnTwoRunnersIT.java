package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Best-of-N on real runners: a group of three attempts is spread over two runners of one slot each,
 * every attempt is an ordinary job for the push gate (its container cannot write a sibling's refs,
 * whatever its command tries), and approving one supersedes the other two.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class AttemptsOnTwoRunnersIT {

  /**
   * Each attempt writes a file, then tries to push over every other job's work it can see (the
   * attempts that ran before it) and notes what the gate answered.
   */
  static final String ATTEMPT =
      "echo \"$SPB_JOB_ID\" > attempt.txt; sleep 2; git add attempt.txt;"
          + " git -c user.name=a -c user.email=a@b commit -qm attempt;"
          + " for ref in $(git ls-remote \"$SPB_CLONE_URL\" 'refs/agents/*' | cut -f2"
          + " | grep -v \"refs/agents/$SPB_JOB_ID/\"); do"
          + " if git push -q \"$SPB_CLONE_URL\" \"+HEAD:$ref\" 2>>attack.log;"
          + " then echo \"PUSHED $ref\" >> attack.txt; else echo \"REFUSED $ref\" >> attack.txt; fi;"
          + " done; touch attack.txt";

  @TempDir static Path tmp;
  static JobTestBed bed;

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "120s");
    bed.startRunner("r1", Map.of("SPB_RUNNER_SLOTS", "1"));
    bed.startRunner("r2", Map.of("SPB_RUNNER_SLOTS", "1"));
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void threeAttemptsOnTwoRunnersEachKeptToItsOwnRefsAndOneApprovedSupersedesTheOthers()
      throws Exception {
    Path repo = bed.gateway.repoDir("demo");
    HttpResponse<String> created =
        bed.createJob(
            "demo",
            new JsonObject()
                .put("task", "write attempt.txt")
                .put("exec", ATTEMPT)
                .put("attempts", 3));
    assertEquals(201, created.statusCode(), created.body());
    JsonObject group = new JsonObject(created.body());
    List<String> ids = group.getJsonArray("jobs").stream().map(String::valueOf).toList();
    assertEquals(3, ids.size());

    Set<String> runners = new HashSet<>();
    Map<String, String> proposals = new HashMap<>();
    for (String id : ids) {
      JsonObject done = bed.awaitFinished("demo", id);
      assertEquals("ok", done.getString("exit_reason"), bed.log(id));
      assertEquals(group.getString("group"), done.getString("group"));
      runners.add(done.getString("runner_id"));
      proposals.put(id, done.getString("proposal_sha"));
    }
    assertEquals(Set.of("r1", "r2"), runners, "the attempts ran on both runners");

    // What each attempt tried on its siblings' refs, from its own proposal.
    List<String> attacks = new ArrayList<>();
    for (String id : ids) {
      String sha = proposals.get(id);
      assertEquals(
          id + "\n", bed.git.ok(repo, "show", sha + ":attempt.txt").output(), "its own work");
      String attack = bed.git.ok(repo, "show", sha + ":attack.txt").output();
      assertTrue(!attack.contains("PUSHED"), id + " wrote a sibling's ref: " + attack);
      attacks.addAll(attack.lines().toList());
    }
    assertTrue(
        attacks.stream().anyMatch(line -> line.startsWith("REFUSED refs/agents/")),
        "the attempt that ran last tried the first ones' refs: " + attacks);
    for (String id : ids) {
      assertEquals(
          proposals.get(id),
          bed.git.ok(repo, "rev-parse", "refs/agents/" + id + "/proposal").output().strip(),
          "each attempt's proposal is still its own");
    }

    String chosen = ids.get(1);
    HttpResponse<String> approved =
        bed.gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs/" + chosen + "/approve",
            bed.gateway.ownerToken,
            new JsonObject().put("branch", "main").put("sha", proposals.get(chosen)).encode());
    assertEquals(200, approved.statusCode(), approved.body());
    assertEquals(proposals.get(chosen), bed.git.ok(repo, "rev-parse", "main").output().strip());
    JsonArray compared =
        new JsonObject(
                bed.gateway
                    .api(
                        "GET",
                        "/api/v1/repos/demo/agent-groups/" + group.getString("group"),
                        bed.gateway.ownerToken,
                        null)
                    .body())
            .getJsonArray("jobs");
    for (int i = 0; i < 3; i++) {
      JsonObject attempt = compared.getJsonObject(i);
      assertEquals(ids.get(i), attempt.getString("id"));
      assertEquals(
          i == 1 ? "approved" : "superseded",
          attempt.getJsonObject("decision").getString("decision"),
          attempt.encode());
      assertTrue(
          bed.git.refs(repo).contains("refs/agents/" + ids.get(i) + "/proposal"),
          "refs kept until deleted");
    }
  }
}
