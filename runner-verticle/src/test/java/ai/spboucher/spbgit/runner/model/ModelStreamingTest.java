package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.FakeProvider;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The model endpoint's streaming, keep-alive, concurrency and mid-stream budget, over its real unix
 * socket and real Vert.x, with the runner's {@link FakeProvider} streaming upstream.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModelStreamingTest {

  static final String KEY = ModelEndpointTest.KEY;
  static final String CHAT = "/v1/chat/completions";
  static final String RESPONSES = "/v1/responses";
  static final String MESSAGES = "/v1/messages";
  static final Vertx VERTX = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));

  @TempDir Path tmp;
  FakeProvider fake;
  ModelEndpoint endpoint;
  final List<ModelCallRecord> records = new CopyOnWriteArrayList<>();

  @AfterAll
  static void closeVertx() throws Exception {
    VERTX.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() {
    if (endpoint != null) {
      endpoint.close();
    }
    if (fake != null) {
      fake.close();
    }
  }

  Path start(ModelProvider provider, long budget, Duration timeout, int concurrency)
      throws Exception {
    fake = FakeProvider.start(KEY);
    ModelConfig config =
        new ModelConfig(
            provider,
            URI.create(fake.baseUrl()),
            KEY,
            "model-a",
            List.of("model-a"),
            budget,
            timeout,
            concurrency);
    endpoint =
        ModelEndpoint.start(
            VERTX,
            tmp.resolve("model.sock"),
            new ProviderClient(config),
            "model-a",
            new TokenMeter(budget),
            records::add);
    return endpoint.socketPath();
  }

  Path start(ModelProvider provider) throws Exception {
    return start(provider, 200_000, Duration.ofSeconds(30), 4);
  }

  static String streamed(String extra) {
    return "{\"stream\":true,\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
        + extra
        + "}";
  }

  /** {@link #streamed} in the shape of the Responses API. */
  static String streamedInput() {
    return "{\"stream\":true,\"max_output_tokens\":100,"
        + "\"input\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  static String streamedFor(String path) {
    return path.equals(RESPONSES) ? streamedInput() : streamed("");
  }

  static Usage ours(FakeProvider.Usage usage) {
    return new Usage(usage.inputTokens() + usage.cacheReadTokens(), usage.outputTokens());
  }

  @Test
  void streamsEveryApiAndRecordsTheUsageTheProviderReported() throws Exception {
    for (String[] api :
        List.of(
            new String[] {"openai", CHAT, "data: [DONE]"},
            new String[] {"openai", RESPONSES, "event: response.completed"},
            new String[] {"anthropic", MESSAGES, "event: message_stop"})) {
      records.clear();
      Path socket = start(ModelProvider.of(api[0]));
      fake.then(fake.toolCall("write_file", "{\"path\":\"a.txt\",\"text\":\"hello\"}", 321, 47));
      fake.then(fake.text("Done, the file is written.", 400, 12));

      EndpointClient.Response tool = EndpointClient.post(socket, api[1], streamedFor(api[1]));
      EndpointClient.Response text = EndpointClient.post(socket, api[1], streamedFor(api[1]));

      assertEquals(200, tool.status(), tool.text());
      assertTrue(tool.headers().get("content-type").startsWith("text/event-stream"));
      assertTrue(tool.text().contains(api[2]), tool.text());
      assertTrue(tool.text().contains("write_file"), tool.text());
      assertTrue(text.text().contains("file is written") || text.text().contains("written."));
      ModelEndpointTest.awaitCondition(() -> records.size() == 2);
      assertEquals(ours(fake.reportedUsage()), endpoint.meter().spent(), api[1]);
      assertEquals(new Usage(321, 47), records.get(0).usage(), api[1]);
      assertEquals(new Usage(400, 12), records.get(1).usage(), api[1]);
      for (ModelCallRecord record : records) {
        assertTrue(record.streamed(), api[1]);
        assertEquals(api[1], record.path());
        assertNull(record.error(), record.error());
        assertTrue(record.bytesDown() > 0);
      }
      endpoint.close();
      fake.close();
      tmp.resolve("model.sock").toFile().delete();
    }
  }

  @Test
  void theFirstEventReachesTheAgentWhileTheProviderIsStillAnswering() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC);
    CountDownLatch release = new CountDownLatch(1);
    fake.holdStreamsAfter(1, release);
    fake.then(fake.text("a long answer", 50, 20));

    try (EndpointClient.Connection connection = EndpointClient.Connection.open(socket)) {
      connection.send(EndpointClient.request(MESSAGES, streamed(""), Map.of()));
      String seen = connection.readUntil("event: message_start");
      assertFalse(seen.contains("message_stop"), "the provider has not finished");
      assertTrue(fake.reportedUsage().equals(FakeProvider.Usage.NONE), "nor reported its usage");
      release.countDown();
      EndpointClient.Response rest = connection.readResponse();
      assertTrue(rest.text().contains("event: message_stop"), rest.text());
    }
    ModelEndpointTest.awaitCondition(() -> records.size() == 1);
    assertEquals(new Usage(50, 20), records.get(0).usage());
  }

  @Test
  void keepsTheConnectionForTheNextCalls() throws Exception {
    Path socket = start(ModelProvider.OPENAI);
    try (EndpointClient.Connection connection = EndpointClient.Connection.open(socket)) {
      for (String body : List.of("{\"messages\":[]}", streamed(""), "{\"messages\":[]}")) {
        connection.send(EndpointClient.request(CHAT, body, Map.of()));
        EndpointClient.Response response = connection.readResponse();
        assertEquals(200, response.status(), response.text());
        assertFalse(response.closed());
      }
      connection.send(EndpointClient.request(RESPONSES, "{\"input\":\"hi\"}", Map.of()));
      assertEquals(200, connection.readResponse().status());
    }
    assertEquals(4, fake.received().size());
    ModelEndpointTest.awaitCondition(() -> records.size() == 4);
  }

  @Test
  void blanksTheKeyWhenTheProviderSplitsItAcrossChunks() throws Exception {
    Path socket = start(ModelProvider.OPENAI);
    String half = KEY.substring(0, KEY.length() / 2);
    String rest = KEY.substring(KEY.length() / 2);
    fake.then(
        FakeProvider.Reply.streamed(
                Map.of("x-request-id", "quoting " + KEY),
                List.of(
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"your key is " + half,
                    rest + "!\"}}]}\n\n",
                    "data: [DONE]\n\n"),
                FakeProvider.Usage.NONE)
            .slowed(100));

    EndpointClient.Response response = EndpointClient.post(socket, CHAT, streamed(""));

    assertEquals(200, response.status());
    assertFalse(response.text().contains(half), response.text());
    assertTrue(response.text().contains("your key is [redacted]!"), response.text());
    assertFalse(response.headers().toString().contains(KEY), response.headers().toString());
  }

  @Test
  void countsTokensAndTakesClaudeCodesBetaQuery() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC);

    EndpointClient.Response count =
        EndpointClient.post(
            socket,
            MESSAGES + "/count_tokens?beta=true",
            "{\"model\":\"model-a\",\"messages\":[{\"role\":\"user\",\"content\":\"count me\"}]}");
    EndpointClient.Response message =
        EndpointClient.post(socket, MESSAGES + "?beta=true", streamed(""));

    assertEquals(200, count.status(), count.text());
    assertTrue(count.json().path("input_tokens").asLong() > 0);
    assertEquals(200, message.status());
    List<FakeProvider.Received> received = fake.received();
    assertEquals("/v1/messages/count_tokens", received.get(0).path());
    assertNull(received.get(0).query(), "the query is not forwarded");
    assertNull(received.get(1).query());
    ModelEndpointTest.awaitCondition(() -> records.size() == 2);
    assertEquals(Usage.NONE, records.get(0).usage(), "counting tokens costs none");
    assertEquals("/v1/messages/count_tokens", records.get(0).path());
    assertFalse(records.get(0).streamed());
  }

  @Test
  void callsBeyondTheJobsConcurrencyWaitThenAreTurnedAway() throws Exception {
    Path socket = start(ModelProvider.OPENAI, 200_000, Duration.ofSeconds(2), 1);
    // One slow stream, never silent for long, holds the only slot for about 4 s.
    fake.then(request -> slowChat(30, 130));

    CompletableFuture<EndpointClient.Response> slow =
        CompletableFuture.supplyAsync(() -> post(socket, CHAT, streamed("")));
    ModelEndpointTest.awaitCondition(() -> fake.received().size() == 1);
    EndpointClient.Response waited = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");

    assertEquals(503, waited.status(), waited.text());
    assertEquals("too_many_calls", waited.errorType());
    assertEquals("1", waited.headers().get("retry-after"));
    assertEquals(1, fake.received().size(), "the waiting call never reached the provider");
    assertEquals(200, slow.get(20, TimeUnit.SECONDS).status());
    assertEquals(200, EndpointClient.post(socket, CHAT, "{\"messages\":[]}").status());
  }

  @Test
  void aSecondCallWaitsForTheSlotOfTheFirst() throws Exception {
    Path socket = start(ModelProvider.OPENAI, 200_000, Duration.ofSeconds(10), 2);
    CountDownLatch release = new CountDownLatch(1);
    fake.holdStreamsAfter(1, release);

    List<CompletableFuture<EndpointClient.Response>> calls = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      calls.add(CompletableFuture.supplyAsync(() -> post(socket, CHAT, streamed(""))));
    }
    ModelEndpointTest.awaitCondition(() -> fake.received().size() == 2);
    Thread.sleep(500);
    assertEquals(2, fake.received().size(), "at most SPB_MODEL_CONCURRENCY calls in flight");
    release.countDown();

    for (CompletableFuture<EndpointClient.Response> call : calls) {
      assertEquals(200, call.get(20, TimeUnit.SECONDS).status());
    }
    assertEquals(3, fake.received().size());
  }

  @Test
  void concurrentStreamsAreCutWithAnthropicsErrorEventPastTheBudget() throws Exception {
    long budget = 200;
    int streams = 4;
    Path socket = start(ModelProvider.ANTHROPIC, budget, Duration.ofSeconds(30), streams);
    CompletableFuture<Usage> exhausted = endpoint.meter().exhaustion();
    for (int i = 0; i < streams; i++) {
      fake.then(request -> slowAnthropic(10, 60, 30));
    }

    List<CompletableFuture<EndpointClient.Response>> calls = new ArrayList<>();
    for (int i = 0; i < streams; i++) {
      calls.add(CompletableFuture.supplyAsync(() -> post(socket, MESSAGES, streamed(""))));
    }

    for (CompletableFuture<EndpointClient.Response> call : calls) {
      EndpointClient.Response response = call.get(30, TimeUnit.SECONDS);
      assertEquals(200, response.status());
      String text = response.text();
      assertTrue(text.contains("text_delta"), "partial work reached the agent: " + text);
      assertFalse(text.contains("message_stop"), text);
      assertTrue(
          text.endsWith(
                  "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"budget_exceeded\","
                      + "\"message\":\""
                      + endpoint.budgetMessage().replaceAll("\\(\\d+ used\\)", "")
                      + "\"}}\n\n")
              || lastEvent(text).contains("\"type\":\"budget_exceeded\""),
          text);
    }
    exhausted.get(5, TimeUnit.SECONDS);
    assertTrue(endpoint.meter().exhausted());
    // Each event carries 20 characters: about 5 tokens, the most a stream adds past the crossing.
    long bound = budget + streams * (5 + 1);
    ModelEndpointTest.awaitCondition(() -> records.size() == streams);
    long spent = endpoint.meter().spent().total();
    assertTrue(spent > budget - 5 && spent <= bound, spent + " tokens against a bound of " + bound);
    assertEquals(
        spent, records.stream().mapToLong(record -> record.usage().total()).sum(), "recorded");
    records.forEach(
        record -> assertTrue(record.error().startsWith("budget_exceeded"), record.error()));
    EndpointClient.Response next = EndpointClient.post(socket, MESSAGES, streamed(""));
    assertEquals(429, next.status());
    assertEquals("budget_exceeded", next.errorType());
  }

  @Test
  void chatAndResponsesStreamsEndWithTheirOwnErrorShape() throws Exception {
    Path socket = start(ModelProvider.OPENAI, 50, Duration.ofSeconds(30), 4);
    fake.then(request -> slowChat(60, 10));
    EndpointClient.Response chat = EndpointClient.post(socket, CHAT, streamed(""));
    JsonNode error =
        FakeProvider.JSON.readTree(lastEvent(chat.text()).substring("data: ".length()));
    assertEquals("budget_exceeded", error.path("error").path("type").asText(), chat.text());
    assertEquals("budget_exceeded", error.path("error").path("code").asText());
    assertTrue(endpoint.meter().exhausted());

    records.clear();
    endpoint.close();
    fake.close();
    tmp.resolve("model.sock").toFile().delete();
    socket = start(ModelProvider.OPENAI, 50, Duration.ofSeconds(30), 4);
    fake.then(request -> slowResponses(60, 10));
    EndpointClient.Response responses = EndpointClient.post(socket, RESPONSES, streamedInput());
    String last = lastEvent(responses.text());
    assertTrue(last.startsWith("event: response.failed\n"), responses.text());
    JsonNode failed = FakeProvider.JSON.readTree(last.substring(last.indexOf("data: ") + 6));
    assertEquals("failed", failed.path("response").path("status").asText());
    assertEquals("budget_exceeded", failed.path("response").path("error").path("code").asText());
  }

  @Test
  void aStreamTheProviderDropsEndsWithAnErrorEventAndIsCountedAsFarAsItCame() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC);
    fake.then(request -> slowAnthropic(300, 10, 0).droppedAfter(6));

    EndpointClient.Response response = EndpointClient.post(socket, MESSAGES, streamed(""));

    assertEquals(200, response.status());
    String last = lastEvent(response.text());
    assertTrue(last.startsWith("event: error\n"), response.text());
    assertTrue(last.contains("\"type\":\"upstream_dropped\""), last);
    ModelEndpointTest.awaitCondition(() -> records.size() == 1);
    ModelCallRecord record = records.get(0);
    assertTrue(record.error().startsWith("upstream_dropped"), record.error());
    assertTrue(record.streamed());
    // message_start's input, exactly; the text of the four deltas that came, estimated.
    assertEquals(new Usage(300, 20), record.usage());
    assertEquals(record.usage(), endpoint.meter().spent());
  }

  @Test
  void aProviderSilentMidStreamEndsItWithATimeoutEvent() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC, 200_000, Duration.ofSeconds(1), 4);
    fake.then(request -> slowAnthropic(30, 3, 2500));

    long started = System.nanoTime();
    EndpointClient.Response response = EndpointClient.post(socket, MESSAGES, streamed(""));

    assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(2), "cut at the timeout");
    assertTrue(lastEvent(response.text()).contains("\"type\":\"upstream_timeout\""));
    ModelEndpointTest.awaitCondition(() -> records.size() == 1);
    assertTrue(records.get(0).error().startsWith("upstream_timeout"), records.get(0).error());
  }

  private static EndpointClient.Response post(Path socket, String path, String body) {
    try {
      return EndpointClient.post(socket, path, body);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String lastEvent(String stream) {
    String trimmed = stream.substring(0, stream.length() - 2);
    return trimmed.substring(trimmed.lastIndexOf("\n\n") + 2);
  }

  /** An Anthropic stream: message_start with the input, then 20-character text deltas. */
  static FakeProvider.Reply slowAnthropic(long input, int deltas, long gapMs) {
    List<String> events = new ArrayList<>();
    ObjectNode start = FakeProvider.JSON.createObjectNode().put("type", "message_start");
    start
        .putObject("message")
        .put("id", "msg_1")
        .put("type", "message")
        .put("role", "assistant")
        .putObject("usage")
        .put("input_tokens", input)
        .put("output_tokens", 1);
    events.add("event: message_start\ndata: " + start + "\n\n");
    events.add(
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
            + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    for (int i = 0; i < deltas; i++) {
      events.add(
          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
              + "\"delta\":{\"type\":\"text_delta\",\"text\":\""
              + String.format("%019d ", i)
              + "\"}}\n\n");
    }
    events.add(
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
            + "\"end_turn\"},\"usage\":{\"output_tokens\":"
            + deltas * 5
            + "}}\n\n");
    events.add("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    return FakeProvider.Reply.streamed(
            Map.of(), events, new FakeProvider.Usage(input, 0, deltas * 5L))
        .slowed(gapMs);
  }

  /** A chat stream of 20-character content deltas, then its usage chunk. */
  static FakeProvider.Reply slowChat(int deltas, long gapMs) {
    List<String> events = new ArrayList<>();
    for (int i = 0; i < deltas; i++) {
      events.add(
          "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
              + "\"delta\":{\"content\":\""
              + String.format("%019d ", i)
              + "\"},\"finish_reason\":null}],\"usage\":null}\n\n");
    }
    events.add(
        "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,"
            + "\"completion_tokens\":"
            + deltas * 5
            + "}}\n\n");
    events.add("data: [DONE]\n\n");
    return FakeProvider.Reply.streamed(Map.of(), events, new FakeProvider.Usage(10, 0, deltas * 5L))
        .slowed(gapMs);
  }

  /** A Responses stream of 20-character text deltas, then response.completed. */
  static FakeProvider.Reply slowResponses(int deltas, long gapMs) {
    List<String> events = new ArrayList<>();
    for (int i = 0; i < deltas; i++) {
      events.add(
          "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
              + "\"delta\":\""
              + String.format("%019d ", i)
              + "\"}\n\n");
    }
    events.add(
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":"
            + "{\"status\":\"completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":"
            + deltas * 5
            + "}}}\n\n");
    return FakeProvider.Reply.streamed(Map.of(), events, new FakeProvider.Usage(10, 0, deltas * 5L))
        .slowed(gapMs);
  }
}
