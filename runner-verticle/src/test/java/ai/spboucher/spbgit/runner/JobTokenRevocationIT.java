package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.GitCli;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Nats;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job's token pushes while the job runs (through the runner's git relay, the only holder of it)
 * and is refused once the job has ended. The test reads the token where the runner does, from the
 * job request on NATS; the job itself looks for it everywhere it could and must not find it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class JobTokenRevocationIT {

  private static final String EXEC =
      String.join(
          "\n",
          "if cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' "
              + "| grep -q -e 'SPB_JOB_TOKE[N]' -e '^eyJ'; then echo token-visible; else echo token-absent; fi",
          "git push -q origin HEAD:refs/agents/$SPB_JOB_ID/early");

  @TempDir static Path tmp;
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
    CompletableFuture<String> sent = new CompletableFuture<>();
    String id;
    try (Connection nats = Nats.connect(bed.nats.url())) {
      Dispatcher requests =
          nats.createDispatcher(
              message -> {
                try {
                  sent.complete(bed.jobToken(JobRequest.parseFrom(message.getData())));
                } catch (Exception e) {
                  sent.completeExceptionally(e);
                }
              });
      requests.subscribe(Subjects.ALL_JOB_REQUESTS);
      nats.flush(Duration.ofSeconds(5));
      id = bed.submit("demo", EXEC, null).getString("id");
      sent.get(30, TimeUnit.SECONDS);
    }
    String token = sent.get();
    JsonObject done = bed.awaitFinished("demo", id);
    String log = bed.log(id);
    assertEquals("ok", done.getString("exit_reason"), log);
    assertTrue(log.contains("token-absent") && !log.contains("token-visible"), log);
    assertFalse(log.contains(token), "the token never reaches the job's output");
    assertTrue(
        bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/early"),
        "the relay pushed with the token while the job ran:\n" + log);

    String jti = claims(token).getString("jti");
    JsonObject created = bed.auditEntries(id).get(0);
    assertEquals("job_created", created.getString("event"));
    assertEquals(jti, created.getString("token_id"), "the job's own token, as audited");
    JsonArray revoked =
        new JsonObject(Files.readString(bed.gateway.dataDir.resolve("revoked-job-tokens.json")))
            .getJsonArray("revoked");
    assertTrue(
        revoked.stream().anyMatch(e -> jti.equals(((JsonObject) e).getString("jti"))),
        revoked.encode());

    HttpResponse<byte[]> advert =
        bed.gateway.raw(
            HttpRequest.newBuilder(
                    URI.create(bed.gateway.repoUrl("demo") + "/info/refs?service=git-receive-pack"))
                .header(
                    "Authorization",
                    "Basic "
                        + Base64.getEncoder()
                            .encodeToString(("agent:" + token).getBytes(StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build());
    String body = new String(advert.body(), StandardCharsets.UTF_8);
    assertEquals(401, advert.statusCode(), body);
    assertTrue(body.contains("revoked"), body);

    Path clone = tmp.resolve("late-clone");
    bed.git.ok(tmp, "clone", "-q", bed.gateway.repoUrl("demo"), clone.toString());
    GitCli.Result late =
        bed.git.run(
            clone, "push", bed.gateway.pushUrl("demo", token), "HEAD:refs/agents/" + id + "/late");
    assertFalse(late.ok(), late.output());
    assertFalse(bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/late"));
  }

  private static JsonObject claims(String jwt) {
    String payload = jwt.split("\\.")[1];
    return new JsonObject(
        new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8));
  }
}
