package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.FakeProvider;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model endpoint's trust boundaries on the real stack: a gateway, a runner and Docker, an exec
 * job with the model endpoint ({@code exec_model}) whose script calls it with the image's real
 * curl, and {@link FakeProvider} as the provider, recording what reaches it. A request for a
 * provider-side feature off the API's positive list, or for work that would go on outside the job
 * (background mode, stored responses and their chains), is refused with a 400 naming the field,
 * reaches the provider not at all and is in the job's model calls; the job's model calls add up to
 * its metered spend, however the client closes its connections; fifty one-shot curl calls in a row
 * all get through. Each test starts the one runner it needs.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ModelEndpointBoundariesIT {

  static final String KEY = "sk-boundaries-it-Qw8Ez4Rt6Yu2Io9Pa3Sd";
  static final String GPT = "gpt-test";
  static final String CLAUDE = "claude-test";
  static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The script's helper: {@code call NAME PATH BODY [CURL ARGS]} posts {@code BODY} with the
   * conventional placeholder keys and prints {@code CALL NAME STATUS ANSWER} on one line.
   */
  static final String CALL =
      """
      call() {
        name=$1 path=$2 body=$3; shift 3
        printf '%s' "$body" > /tmp/body.json
        code=$(curl -sS -o /tmp/answer -w '%{http_code}' -X POST "$SPB_MODEL_BASE_URL$path" \\
          -H 'content-type: application/json' -H "authorization: Bearer $OPENAI_API_KEY" \\
          -H "x-api-key: $ANTHROPIC_API_KEY" -H 'anthropic-version: 2023-06-01' \\
          "$@" --data-binary @/tmp/body.json)
        printf 'CALL %s %s %s\\n' "$name" "$code" "$(tr -d '\\n' < /tmp/answer | head -c 4000)"
      }
      """;

  @TempDir static Path tmp;
  static JobTestBed bed;
  static Path keyDir;
  FakeProvider fake;
  Vertx runner;

  /** The running runner's model, which the jobs name. */
  String model;

  /** Each job's repository, by job id. */
  final Map<String, String> repos = new HashMap<>();

  @BeforeAll
  static void start() throws Exception {
    JobTestBed.requireLlmAgent(JobTestBed.IMAGE);
    bed =
        JobTestBed.start(
            tmp,
            "180s",
            new JsonObject().put("model", GPT).put("models", String.join(",", GPT, CLAUDE)));
    keyDir = Files.createTempDirectory("boundaries-it-key");
  }

  @BeforeEach
  void startFake() throws IOException {
    fake = FakeProvider.start(KEY);
  }

  @AfterEach
  void stopRunner() {
    if (runner != null) {
      bed.stopRunner(runner);
      runner = null;
    }
    fake.close();
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void openAiFeaturesOffTheListAndWorkOutsideTheJobAreRefusedNamingTheField() throws Exception {
    startRunner("openai", GPT);
    Map<String, String[]> refused = new LinkedHashMap<>();
    refused.put(
        "hosted_shell",
        new String[] {
          "/v1/responses",
          "{\"input\":\"list /mnt/data\",\"tools\":[{\"type\":\"shell\",\"environment\":"
              + "{\"type\":\"container_auto\",\"network_policy\":{\"type\":\"allowlist\","
              + "\"allowed_domains\":[\"collector.example\"]}}}]}",
          "tools[0].environment.type"
        });
    refused.put(
        "input_image_url",
        new String[] {
          "/v1/responses",
          "{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":"
              + "\"https://collector.example/p.png?repo=README-contents\"}]}]}",
          "input[0].content[0].image_url"
        });
    refused.put(
        "input_file_url",
        new String[] {
          "/v1/responses",
          "{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_file\",\"file_url\":"
              + "\"https://collector.example/f.pdf?repo=README-contents\"}]}]}",
          "input[0].content[0].file_url"
        });
    refused.put(
        "chat_image_url",
        new String[] {
          "/v1/chat/completions",
          "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
              + "{\"url\":\"http://collector.example/x.png?repo=README-contents\"}}]}]}",
          "messages[0].content[0].image_url.url"
        });
    refused.put(
        "background",
        new String[] {"/v1/responses", "{\"input\":\"hi\",\"background\":true}", "background"});
    refused.put(
        "previous_response_id",
        new String[] {
          "/v1/responses",
          "{\"input\":\"go on\",\"previous_response_id\":\"resp_0123\"}",
          "previous_response_id"
        });
    refused.put(
        "store", new String[] {"/v1/responses", "{\"input\":\"hi\",\"store\":true}", "store"});

    assertRefusedAndOnlyTheAdmittedCallForwarded(
        refused, "/v1/responses", "{\"input\":\"hi\",\"store\":false}");
    assertFalse(
        fake.received().get(0).json().path("store").asBoolean(true), "sent with store: false");
  }

  @Test
  void anthropicSourcesByUrlAndToolTypesMatchedByPrefixAreRefusedNamingTheField() throws Exception {
    startRunner("anthropic", CLAUDE);
    Map<String, String[]> refused = new LinkedHashMap<>();
    refused.put(
        "image_source_url",
        new String[] {
          "/v1/messages",
          "{\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\","
              + "\"source\":{\"type\":\"url\",\"url\":\"https://collector.example/i.png?repo=README\"}}]}]}",
          "messages[0].content[0].source.type"
        });
    refused.put(
        "document_source_url",
        new String[] {
          "/v1/messages",
          "{\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\","
              + "\"source\":{\"type\":\"url\",\"url\":\"https://collector.example/d.pdf?repo=README\"}}]}]}",
          "messages[0].content[0].source.type"
        });
    refused.put(
        "customweb_fetch",
        new String[] {
          "/v1/messages",
          "{\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"fetch it\"}],"
              + "\"tools\":[{\"type\":\"customweb_fetch\",\"name\":\"web_fetch\"}]}",
          "tools[0].type"
        });
    refused.put(
        "mcp_servers",
        new String[] {
          "/v1/messages",
          "{\"max_tokens\":16,\"messages\":[],\"mcp_servers\":[{\"type\":\"url\","
              + "\"url\":\"https://collector.example/sse\",\"name\":\"c\"}]}",
          "mcp_servers"
        });

    assertRefusedAndOnlyTheAdmittedCallForwarded(
        refused,
        "/v1/messages",
        "{\"max_tokens\":16,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
  }

  @Test
  void theJobsModelCallsAddUpToItsSpendWhenEveryCallAsksConnectionClose() throws Exception {
    startRunner("anthropic", CLAUDE);
    fake.then(
        fake.text("first", 40_000, 500),
        fake.text("second", 45_000, 700),
        fake.text("streamed", 30_000, 300),
        fake.text("kept alive", 20_000, 400));
    String plain = "{\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    String streamed =
        "{\"max_tokens\":64,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    String script =
        CALL
            + "call first /v1/messages '"
            + plain
            + "' -H 'Connection: close'\n"
            + "call second /v1/messages '"
            + plain
            + "' -H 'Connection: close'\n"
            + "call streamed /v1/messages '"
            + streamed
            + "' -H 'Connection: close' -N\n"
            + "call counted /v1/messages/count_tokens '{\"messages\":[]}' -H 'Connection: close'\n"
            + "call kept /v1/messages '"
            + plain
            + "'\n";

    JsonObject job = runScript(script);

    Map<String, String[]> calls = calls(job.getString("id"));
    for (String name : List.of("first", "second", "streamed", "counted", "kept")) {
      assertEquals("200", calls.get(name)[0], name + ": " + calls.get(name)[1]);
    }
    JsonObject spend = job.getJsonObject("spend");
    assertEquals(135_000L, spend.getLong("input_tokens"), job.encodePrettily());
    assertEquals(1_900L, spend.getLong("output_tokens"), job.encodePrettily());
    JsonArray records = modelCalls(job.getString("id"));
    assertEquals(5, records.size(), records.encodePrettily());
    long input = 0;
    long output = 0;
    for (int i = 0; i < records.size(); i++) {
      JsonObject record = records.getJsonObject(i);
      assertEquals("", record.getString("error"), "the agent got every answer whole: " + record);
      input += record.getLong("input_tokens");
      output += record.getLong("output_tokens");
    }
    assertEquals(spend.getLong("input_tokens"), input, "the records add up to the metered spend");
    assertEquals(spend.getLong("output_tokens"), output, "the records add up to the metered spend");
  }

  @Test
  void fiftyOneShotCurlCallsInARowAllGetThrough() throws Exception {
    startRunner("openai", GPT);
    // As tight as a script's loop goes: each curl opens its connection, gets its answer, exits.
    String script =
        "i=0\nwhile [ $i -lt 50 ]; do\n"
            + "  i=$((i + 1))\n"
            + "  curl -sS -o /dev/null -w '%{http_code}\\n' -X POST"
            + " \"$SPB_MODEL_BASE_URL/v1/chat/completions\" -H 'content-type: application/json'"
            + " -H \"authorization: Bearer $OPENAI_API_KEY\""
            + " -d '{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}' >> /tmp/codes\n"
            + "done\n"
            + "printf 'CODES %s\\n' \"$(tr '\\n' ' ' < /tmp/codes)\"\n";

    JsonObject job = runScript(script);

    String codes =
        bed.log(job.getString("id"))
            .lines()
            .filter(l -> l.startsWith("CODES "))
            .findFirst()
            .orElseThrow();
    assertEquals("CODES " + "200 ".repeat(50), codes, "every call got through");
    assertEquals(50, fake.received().size());
    assertEquals(50, modelCalls(job.getString("id")).size());
  }

  // --- helpers
  // -------------------------------------------------------------------------------------------------

  /**
   * Runs one job calling each of {@code refused} and then {@code admittedBody} on {@code
   * admittedPath}: each refused call is answered 400 {@code feature_not_allowed} naming its field,
   * the provider received only the admitted call, and the job's model calls record every refusal.
   */
  void assertRefusedAndOnlyTheAdmittedCallForwarded(
      Map<String, String[]> refused, String admittedPath, String admittedBody) throws Exception {
    StringBuilder script = new StringBuilder(CALL);
    refused.forEach(
        (name, call) ->
            script
                .append("call ")
                .append(name)
                .append(' ')
                .append(call[0])
                .append(" '")
                .append(call[1])
                .append("'\n"));
    script.append("call admitted ").append(admittedPath).append(" '").append(admittedBody);
    script.append("'\n");

    JsonObject job = runScript(script.toString());
    String id = job.getString("id");

    Map<String, String[]> calls = calls(id);
    for (Map.Entry<String, String[]> call : refused.entrySet()) {
      String[] answer = calls.get(call.getKey());
      String field = call.getValue()[2];
      assertEquals("400", answer[0], call.getKey() + ": " + answer[1]);
      JsonNode error = JSON.readTree(answer[1]).path("error");
      assertEquals("feature_not_allowed", error.path("type").asText(), answer[1]);
      assertTrue(
          error.path("message").asText().startsWith(field + " "),
          call.getKey() + " names " + field + ": " + answer[1]);
    }
    assertEquals("200", calls.get("admitted")[0], calls.get("admitted")[1]);
    assertEquals(1, fake.received().size(), "only the admitted call reached the provider");
    assertFalse(fake.received().get(0).text().contains("collector.example"));

    JsonArray records = modelCalls(id);
    assertEquals(refused.size() + 1, records.size(), records.encodePrettily());
    int i = 0;
    for (String[] call : refused.values()) {
      JsonObject record = records.getJsonObject(i++);
      assertEquals(400, record.getInteger("status"), record.encode());
      assertTrue(
          record.getString("error").startsWith("feature_not_allowed: " + call[2] + " "),
          record.encode());
      assertEquals(0L, record.getLong("input_tokens") + record.getLong("output_tokens"));
      assertEquals(
          JSON.readTree(call[1]),
          JSON.readTree(record.getString("request")),
          "the record keeps what the job asked for");
    }
    assertEquals(200, records.getJsonObject(i).getInteger("status"));
  }

  void startRunner(String provider, String model) throws IOException {
    this.model = model;
    Map<String, String> env = new HashMap<>();
    env.put("SPB_MODEL_PROVIDER", provider);
    env.put("SPB_AGENT_IMAGE", JobTestBed.IMAGE);
    env.put("SPB_IMAGES", "base=" + JobTestBed.IMAGE);
    env.put("SPB_LIMIT_MEMORY", "512m");
    env.put("SPB_MODELS", GPT + "," + CLAUDE);
    runner =
        bed.startRunner(
            "boundaries-" + provider + "-" + Long.toString(System.nanoTime(), 36),
            fake.runnerEnv(keyDir, model, env));
  }

  /**
   * Runs {@code script} as an exec job with the model endpoint (on the runner's model), from a
   * repository of its own; returns the finished job, which must have ended ok.
   */
  JsonObject runScript(String script) throws Exception {
    String repo = "calls-" + Long.toString(System.nanoTime(), 36);
    bed.createRepo(repo, Map.of("calls.sh", script));
    HttpResponse<String> created =
        bed.createJob(
            repo,
            new JsonObject()
                .put("task", "call the model endpoint")
                .put("exec", "sh calls.sh")
                .put("model", model));
    assertEquals(201, created.statusCode(), created.body());
    JsonObject job = new JsonObject(created.body());
    repos.put(job.getString("id"), repo);
    assertTrue(job.getBoolean("exec_model"), job.encodePrettily());
    JsonObject finished = bed.awaitFinished(repo, job.getString("id"));
    assertEquals("ok", finished.getString("exit_reason"), bed.log(job.getString("id")));
    return finished;
  }

  /** Each {@code CALL NAME STATUS ANSWER} line the job printed: name to {status, answer}. */
  Map<String, String[]> calls(String id) throws Exception {
    Map<String, String[]> calls = new LinkedHashMap<>();
    for (String line : bed.log(id).lines().toList()) {
      if (line.startsWith("CALL ")) {
        String[] parts = line.split(" ", 4);
        calls.put(parts[1], new String[] {parts[2], parts.length > 3 ? parts[3] : ""});
      }
    }
    return calls;
  }

  JsonArray modelCalls(String id) throws Exception {
    HttpResponse<String> r =
        bed.gateway.api(
            "GET",
            "/api/v1/repos/" + repos.get(id) + "/agent-jobs/" + id + "/model-calls",
            bed.gateway.ownerToken,
            null);
    assertEquals(200, r.statusCode(), r.body());
    return new JsonArray(r.body());
  }
}
