package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.GitCli;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A job's token pushes while the job runs and is refused once the job has ended. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class JobTokenRevocationIT {

  /**
   * The agent unsets SPB_JOB_TOKEN before the owner's command runs, but the container's first process still has
   * it in its environment (same uid): the command reads it there, prints it for the test, and pushes with it.
   */
  private static final String EXEC = String.join("\n",
      "T=$(tr '\\0' '\\n' </proc/1/environ | sed -n 's/^SPB_JOB_TOKEN=//p')",
      "echo \"token=$T\"",
      "git -c credential.helper= -c \"credential.helper=!f() { echo username=agent; echo password=$T; }; f\" "
          + "push -q origin HEAD:refs/agents/$SPB_JOB_ID/early");
  private static final Pattern TOKEN = Pattern.compile("token=([\\w-]+\\.[\\w-]+\\.[\\w-]+)");

  @TempDir
  static Path tmp;
  static JobTestBed bed;

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.startRunner("tokens", Map.of());
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterAll
  static void stop() throws Exception {
    bed.close();
  }

  @Test
  void jobTokenIsRefusedOnceTheJobHasEnded() throws Exception {
    String id = bed.submit("demo", EXEC, null).getString("id");
    JsonObject done = bed.awaitFinished("demo", id);
    String log = bed.log(id);
    assertEquals("ok", done.getString("exit_reason"), log);
    assertTrue(bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/early"),
        "the token pushed while the job ran:\n" + log);

    Matcher printed = TOKEN.matcher(log);
    assertTrue(printed.find(), log);
    String token = printed.group(1);
    String jti = claims(token).getString("jti");
    JsonObject created = bed.auditEntries(id).get(0);
    assertEquals("job_created", created.getString("event"));
    assertEquals(jti, created.getString("token_id"), "the job's own token, as audited");
    JsonArray revoked = new JsonObject(Files.readString(bed.gateway.dataDir.resolve("revoked-job-tokens.json")))
        .getJsonArray("revoked");
    assertTrue(revoked.stream().anyMatch(e -> jti.equals(((JsonObject) e).getString("jti"))), revoked.encode());

    HttpResponse<byte[]> advert = bed.gateway.raw(HttpRequest.newBuilder(
            URI.create(bed.gateway.repoUrl("demo") + "/info/refs?service=git-receive-pack"))
        .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
            ("agent:" + token).getBytes(StandardCharsets.UTF_8)))
        .timeout(Duration.ofSeconds(30)).GET().build());
    String body = new String(advert.body(), StandardCharsets.UTF_8);
    assertEquals(401, advert.statusCode(), body);
    assertTrue(body.contains("revoked"), body);

    Path clone = tmp.resolve("late-clone");
    bed.git.ok(tmp, "clone", "-q", bed.gateway.repoUrl("demo"), clone.toString());
    GitCli.Result late = bed.git.run(clone, "push", bed.gateway.pushUrl("demo", token),
        "HEAD:refs/agents/" + id + "/late");
    assertFalse(late.ok(), late.output());
    assertFalse(bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/late"));
  }

  private static JsonObject claims(String jwt) {
    String payload = jwt.split("\\.")[1];
    return new JsonObject(new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8));
  }
}
