package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.NatsServerProcess;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Requests are checked against the OpenAPI document before any handler runs: what does not match
 * gets 400 with a JSON error naming the parameter or field, and nothing changes (no repository,
 * token, job, audit line or revocation). Several cases are ones the handlers alone would have
 * accepted or answered otherwise, so they fail if validation is not in place.
 */
class ApiValidationIT {

  private static final String JOB = "/api/v1/repos/demo/agent-jobs/mx27ir9g-7qz0";

  @TempDir static Path tmp;
  static TestGateway gateway;
  private String before;

  @BeforeAll
  static void startGateway() throws Exception {
    // NATS is unreachable on purpose: a job body that passed validation would get 503, never 400.
    gateway =
        TestGateway.start(
            tmp.resolve("data"),
            new JsonObject().put("natsUrl", "nats://127.0.0.1:" + NatsServerProcess.freePort()));
    gateway.createRepo("demo");
  }

  @AfterAll
  static void stopGateway() {
    gateway.close();
  }

  @BeforeEach
  void snapshot() throws Exception {
    before = state();
  }

  @AfterEach
  void nothingChanged() throws Exception {
    assertEquals(before, state());
  }

  @ParameterizedTest(name = "{0} {1} {2}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        // The handler would mint a one-hour token for a ttl that is not a number.
        "POST | /api/v1/job-tokens | `{\"repo\":\"demo\",\"job\":\"j1\",\"ttl\":\"60\"}` | ttl",
        "POST | /api/v1/job-tokens | `{\"repo\":\"demo\",\"job\":\"J 1\"}` | job",
        "POST | /api/v1/job-tokens | `{\"job\":\"j1\"}` | repo",
        "POST | /api/v1/repos | `{\"name\":\"a..b\"}` | name",
        "POST | /api/v1/repos | `{\"name\":\"ok\",\"description\":7}` | description",
        "POST | /api/v1/repos | `{not json` | body",
        "POST | /api/v1/repos | `[\"demo2\"]` | object",
        "POST | /api/v1/tokens | `{\"label\":\"   \"}` | label",
        "POST | /api/v1/repos/demo/agent-jobs | `{\"task\":\"t\",\"exec\":[\"ls\"]}` | exec",
        "POST | /api/v1/repos/demo/agent-jobs | `{\"exec\":\"true\"}` | task",
        "POST | /api/v1/repos/demo/agent-jobs | `{\"task\":\"t\",\"exec\":\"true\",\"base\":\"a b\"}` | base",
        "POST | /api/v1/repos/demo/agent-jobs | `{\"task\":\"t\",\"exec\":\"true\",\"test_command\":false}` | test_command",
        // The handler would answer 404 (no such job) or 409 (not the proposal); the document says
        // what a sha is.
        "POST | " + JOB + "/approve | `{\"branch\":\"main\",\"sha\":\"abc\"}` | sha",
        "POST | "
            + JOB
            + "/approve | `{\"branch\":\"a..b\",\"sha\":\"0123456789012345678901234567890123456789\"}` | branch",
        "POST | " + JOB + "/approve | `` | body",
      })
  void refusesBodiesThatDoNotMatch(String method, String path, String body, String named)
      throws Exception {
    assertRefused(gateway.api(method, path, gateway.ownerToken, body), named);
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        // The handler would list nothing for a filter that cannot match: the document says it is
        // malformed.
        "GET | /api/v1/agent-jobs?repo=bad%20name | repo",
        "GET | /api/v1/agent-jobs?job=NOT_AN_ID | job",
        // The handler would answer 404 for the unknown job first.
        "GET | " + JOB + "/logs?after=-1 | after",
        "GET | " + JOB + "/logs?after=soon | after",
        // The handler would answer 404 for the unknown job first; the document names the two kinds
        // of work.
        "GET | " + JOB + "/diff?ref=proposals | ref",
      })
  void refusesQueryParametersThatDoNotMatch(String method, String path, String named)
      throws Exception {
    assertRefused(gateway.api(method, path, gateway.ownerToken, null), named);
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        // The handler would add this id to the revocation list.
        "DELETE | /api/v1/job-tokens/not.a.token.id | jti",
        // The handler would answer 404.
        "DELETE | /api/v1/tokens/pat%20x | id",
        "GET | /api/v1/repos/demo/agent-jobs/NOT_AN_ID | id",
        "POST | /api/v1/repos/demo/agent-jobs/x_y/cancel | id",
        "DELETE | /api/v1/repos/demo/agent-jobs/-x/refs | id",
        "GET | /api/v1/repos/a..b/agent-jobs | name",
        "DELETE | /api/v1/repos/x.git | name",
      })
  void refusesPathParametersThatDoNotMatch(String method, String path, String named)
      throws Exception {
    assertRefused(gateway.api(method, path, gateway.ownerToken, null), named);
  }

  @Test
  void withoutAModelAJobNeedsAnExecCommandWithoutAModelEndpointAndAKnownAgent() throws Exception {
    // Valid by the document, refused by the handler: this gateway has no SPB_MODEL, so it cannot
    // queue an llm job.
    HttpResponse<String> llm =
        gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs",
            gateway.ownerToken,
            "{\"task\":\"Fix the typo\"}");
    assertRefused(
        llm, "no model provider is configured (SPB_MODEL), so jobs need an 'exec' shell command");
    HttpResponse<String> execWithModel =
        gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs",
            gateway.ownerToken,
            "{\"task\":\"t\",\"exec\":\"true\",\"model\":\"gpt-test\"}");
    assertRefused(
        execWithModel,
        "no model provider is configured (SPB_MODEL), so an exec job cannot have the model"
            + " endpoint ('model')");
    HttpResponse<String> unknownAgent =
        gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs",
            gateway.ownerToken,
            "{\"task\":\"t\",\"agent\":\"x\"}");
    assertRefused(unknownAgent, "unknown agent 'x' (builtin, claude-code, codex, qwen-code)");
  }

  @Test
  void authenticationComesBeforeValidation() throws Exception {
    HttpResponse<String> anonymous =
        gateway.api("POST", "/api/v1/job-tokens", null, "{\"ttl\":\"x\"}");
    assertEquals(401, anonymous.statusCode(), anonymous.body());
    HttpResponse<String> jobToken =
        gateway.api(
            "GET", "/api/v1/agent-jobs?repo=bad%20name", gateway.jobToken("demo", "j1", 60), null);
    assertEquals(403, jobToken.statusCode(), jobToken.body());
  }

  @Test
  void unknownFieldsAreIgnoredAsTheHandlersAlwaysDid() throws Exception {
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/tokens",
            gateway.ownerToken,
            "{\"label\":\"ci\",\"expires\":\"never\"}");
    assertEquals(201, created.statusCode(), created.body());
    assertEquals(
        204,
        gateway
            .api(
                "DELETE",
                "/api/v1/tokens/" + new JsonObject(created.body()).getString("id"),
                gateway.ownerToken,
                null)
            .statusCode());
  }

  @Test
  void bodiesAreReadAsJsonWhateverTheirContentType() throws Exception {
    // curl -d sends application/x-www-form-urlencoded; the README's examples rely on it.
    HttpResponse<byte[]> created =
        gateway.raw(
            HttpRequest.newBuilder(URI.create(gateway.baseUrl + "/api/v1/repos"))
                .header("Authorization", "Bearer " + gateway.ownerToken)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"name\":\"form-typed\",\"description\":null}"))
                .build());
    assertEquals(201, created.statusCode(), new String(created.body()));
    assertEquals(
        204,
        gateway.api("DELETE", "/api/v1/repos/form-typed", gateway.ownerToken, null).statusCode());
  }

  private static void assertRefused(HttpResponse<String> response, String named) {
    assertEquals(400, response.statusCode(), response.body());
    assertTrue(
        response.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
    String error = new JsonObject(response.body()).getString("error");
    assertTrue(
        error != null && error.contains(named),
        "the error names " + named + ": " + response.body());
  }

  /**
   * What a request could have changed: repositories, tokens, jobs, the audit log and the revocation
   * list.
   */
  private static String state() throws Exception {
    Path data = gateway.dataDir;
    StringBuilder state = new StringBuilder();
    try (Stream<Path> repos = Files.list(data.resolve("repos"))) {
      state.append(repos.map(p -> p.getFileName().toString()).sorted().toList()).append('\n');
    }
    for (String file : new String[] {"agent-jobs.jsonl", "revoked-job-tokens.json"}) {
      Path p = data.resolve(file);
      state
          .append(file)
          .append(": ")
          .append(Files.exists(p) ? Files.readString(p) : "(none)")
          .append('\n');
    }
    JsonArray tokens =
        new JsonArray(gateway.api("GET", "/api/v1/tokens", gateway.ownerToken, null).body());
    state
        .append(tokens.stream().map(t -> ((JsonObject) t).getString("id")).sorted().toList())
        .append('\n');
    state.append(gateway.api("GET", "/api/v1/jobs", gateway.ownerToken, null).body());
    return state.toString();
  }
}
