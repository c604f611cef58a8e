package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.FakeProvider;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The model endpoint over its real unix socket, forwarding to a fake provider on 127.0.0.1. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModelEndpointTest {

  static final String KEY = "sk-runner-ZXhhbXBsZS1rZXktbmV2ZXItaW4tdGhlLWNvbnRhaW5lcg";
  static final String CHAT = "/v1/chat/completions";
  static final String MESSAGES = "/v1/messages";

  @TempDir Path tmp;
  FakeProvider fake;
  ModelEndpoint endpoint;
  final List<ModelCallRecord> records = new CopyOnWriteArrayList<>();

  static final Vertx VERTX = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));

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

  Path start(ModelProvider provider, long budget, Duration timeout) throws Exception {
    fake = FakeProvider.start(KEY);
    ModelConfig config =
        new ModelConfig(
            provider,
            URI.create(fake.baseUrl()),
            KEY,
            "model-a",
            List.of("model-a", "model-b"),
            budget,
            timeout);
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

  Path startOpenAi() throws Exception {
    return start(ModelProvider.OPENAI, 200_000, Duration.ofSeconds(30));
  }

  @Test
  void addsTheRunnersKeyUpstreamAndNeverReturnsIt() throws Exception {
    Path socket = startOpenAi();
    // A provider that quotes the key back (as some error messages do) must not hand it to the
    // agent.
    fake.then(
        request ->
            FakeProvider.openAiError(
                400,
                "invalid_request_error",
                null,
                "bad request with key " + request.header("authorization")));
    fake.then(fake.openAiText("hello", 12, 3));

    EndpointClient.Response quoted =
        EndpointClient.post(
            socket,
            CHAT,
            "{\"messages\":[]}",
            Map.of("authorization", "Bearer agent-guess", "x-api-key", "agent-guess"));
    EndpointClient.Response ok = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");

    assertEquals(400, quoted.status());
    assertFalse(quoted.text().contains(KEY), quoted.text());
    assertTrue(quoted.text().contains("Bearer [redacted]"), quoted.text());
    assertEquals(200, ok.status(), ok.text());
    assertFalse(ok.text().contains(KEY));
    assertFalse(ok.headers().toString().contains(KEY), ok.headers().toString());
    for (FakeProvider.Received received : fake.received()) {
      assertEquals(
          "Bearer " + KEY, received.header("authorization"), "the agent's own header is replaced");
      assertNull(
          received.header("x-api-key"), "no agent header but anthropic-version is forwarded");
    }
    awaitRecords(2);
    records.forEach(
        record -> assertFalse(new String(record.request(), StandardCharsets.UTF_8).contains(KEY)));
    assertFalse(records.get(0).error().contains(KEY), records.get(0).error());
  }

  @Test
  void passesTheProvidersAnswerThroughUnchanged() throws Exception {
    Path socket = startOpenAi();
    fake.then(fake.openAiToolCall("read_file", "{\"path\":\"README.md\"}", 50, 7));

    EndpointClient.Response response =
        EndpointClient.post(
            socket,
            CHAT,
            "{\"model\":\"model-a\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":[]}");

    assertEquals(200, response.status());
    JsonNode call =
        response.json().path("choices").path(0).path("message").path("tool_calls").path(0);
    assertEquals("read_file", call.path("function").path("name").asText());
    assertEquals("{\"path\":\"README.md\"}", call.path("function").path("arguments").asText());
    assertEquals(
        "tool_calls", response.json().path("choices").path(0).path("finish_reason").asText());
    assertTrue(response.headers().containsKey("x-request-id"), response.headers().toString());
    assertFalse(response.headers().containsKey("set-cookie"), "only a few provider headers pass");
    assertNotEquals(
        "close", response.headers().get("connection"), "the connection is kept for the next call");
  }

  @Test
  void forcesTheJobsModelAndAsksAStreamForItsUsage() throws Exception {
    Path socket = startOpenAi();

    EndpointClient.Response streamed =
        EndpointClient.post(
            socket,
            CHAT,
            "{\"messages\":[],\"stream\":true,\"stream_options\":{\"include_usage\":false},\"temperature\":0.70}");
    EndpointClient.Response otherAllowed =
        EndpointClient.post(socket, CHAT, "{\"model\":\"model-b\",\"messages\":[]}");
    EndpointClient.Response notOffered =
        EndpointClient.post(socket, CHAT, "{\"model\":\"gpt-expensive\",\"messages\":[]}");

    assertEquals(200, streamed.status());
    assertTrue(streamed.text().endsWith("data: [DONE]\n\n"), streamed.text());
    assertEquals(200, otherAllowed.status());
    assertEquals(400, notOffered.status());
    assertEquals("model_not_allowed", notOffered.errorType());
    List<FakeProvider.Received> received = fake.received();
    assertEquals(2, received.size(), "the refused model never reached the provider");
    JsonNode first = received.get(0).json();
    assertEquals("model-a", first.path("model").asText());
    assertTrue(first.path("stream").asBoolean(false), "the agent's stream is kept");
    assertTrue(
        first.path("stream_options").path("include_usage").asBoolean(false),
        "a stream always reports its usage");
    assertTrue(received.get(0).text().contains("\"temperature\":0.70"), "numbers are kept as sent");
    assertEquals("model-a", received.get(1).json().path("model").asText());
    assertFalse(received.get(1).json().has("stream_options"), "nothing added to a plain call");
  }

  @Test
  void aFeatureOffTheListIsRefusedNamingItAndNeverReachesTheProvider() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC, 200_000, Duration.ofSeconds(30));

    EndpointClient.Response response =
        EndpointClient.post(
            socket,
            MESSAGES,
            "{\"max_tokens\":10,\"messages\":[],\"tools\":[{\"name\":\"Write\",\"input_schema\":{}},"
                + "{\"type\":\"web_fetch_20250910\",\"name\":\"web_fetch\"}]}");

    assertEquals(400, response.status(), response.text());
    assertEquals(Admitted.REFUSAL_TYPE, response.errorType());
    assertTrue(
        response.json().path("error").path("message").asText().startsWith("tools[1].type"),
        response.text());
    assertEquals(0, fake.received().size(), "nothing reached the provider");
    awaitRecords(1);
    ModelCallRecord record = records.get(0);
    assertEquals(400, record.status());
    assertFalse(record.forwarded());
    assertTrue(record.error().startsWith("feature_not_allowed: tools[1].type"), record.error());
    assertTrue(
        new String(record.request(), StandardCharsets.UTF_8).contains("web_fetch"),
        "the record keeps what the agent asked for");
    assertEquals(Usage.NONE, endpoint.meter().spent());
  }

  @Test
  void aResponsesCallOfferingTheHostedWebSearchIsRefusedAndNeverReachesTheProvider()
      throws Exception {
    Path socket = startOpenAi();

    EndpointClient.Response response =
        EndpointClient.post(
            socket,
            "/v1/responses",
            "{\"input\":\"hi\",\"store\":false,\"tools\":[{\"type\":\"function\",\"name\":\"exec\"},"
                + "{\"type\":\"web_search\",\"external_web_access\":true}]}");

    assertEquals(400, response.status(), response.text());
    assertEquals(Admitted.REFUSAL_TYPE, response.errorType());
    awaitRecords(1);
    assertEquals(0, fake.received().size(), "nothing reached the provider");
    assertTrue(
        records.get(0).error().startsWith("feature_not_allowed: tools[1].type"),
        records.get(0).error());
  }

  @Test
  void aResponsesCallIsNeverStoredAtTheProvider() throws Exception {
    Path socket = startOpenAi();

    EndpointClient.Response stored =
        EndpointClient.post(socket, "/v1/responses", "{\"input\":\"hi\",\"store\":true}");
    EndpointClient.Response unsaid =
        EndpointClient.post(socket, "/v1/responses", "{\"input\":\"hi\"}");

    assertEquals(400, stored.status());
    assertTrue(
        stored.json().path("error").path("message").asText().startsWith("store may only be false"),
        stored.text());
    assertEquals(200, unsaid.status(), unsaid.text());
    assertEquals(1, fake.received().size());
    assertFalse(
        fake.received().get(0).json().path("store").asBoolean(true),
        "a call that says nothing is sent with store: false");
  }

  @Test
  void sumsTheUsageOfEveryCall() throws Exception {
    Path socket = startOpenAi();
    fake.then(fake.openAiToolCall("list_files", "{}", 100, 20), fake.openAiText("done", 130, 11));
    fake.then(FakeProvider.openAiError(500, "server_error", null, "The server had an error"));

    for (int i = 0; i < 3; i++) {
      EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
    }

    assertEquals(new Usage(230, 31), endpoint.meter().spent());
    awaitRecords(3);
    assertEquals(
        List.of(new Usage(100, 20), new Usage(130, 11), Usage.NONE),
        records.stream().map(ModelCallRecord::usage).toList());
    assertEquals(List.of(200, 200, 500), records.stream().map(ModelCallRecord::status).toList());
  }

  @Test
  void readsAnthropicUsageIncludingThePromptCache() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC, 200_000, Duration.ofSeconds(30));
    fake.then(
        fake.anthropicToolUse("list_files", "{\"path\":\".\"}", 300, 40),
        fake.anthropicCachedText("done", 20, 280, 9));

    EndpointClient.Response tool =
        EndpointClient.post(
            socket, MESSAGES, "{\"model\":\"model-a\",\"max_tokens\":1024,\"messages\":[]}");
    EndpointClient.Response text =
        EndpointClient.post(
            socket,
            MESSAGES,
            "{\"model\":\"model-a\",\"max_tokens\":1024,\"messages\":[]}",
            Map.of("anthropic-version", "2024-01-01"));

    assertEquals("tool_use", tool.json().path("content").path(1).path("type").asText());
    assertEquals(200, text.status());
    assertEquals(new Usage(300 + 20 + 280, 49), endpoint.meter().spent());
    List<FakeProvider.Received> received = fake.received();
    assertEquals(KEY, received.get(0).header("x-api-key"));
    assertNull(received.get(0).header("authorization"));
    assertEquals(ModelProvider.DEFAULT_VERSION, received.get(0).header("anthropic-version"));
    assertEquals("2024-01-01", received.get(1).header("anthropic-version"));
  }

  @Test
  void forwardsTheBetaFeaturesAnAnthropicCallNamesAndNothingMalformed() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC, 200_000, Duration.ofSeconds(30));
    fake.then(
        fake.anthropicText("one", 10, 2),
        fake.anthropicText("two", 10, 2),
        fake.anthropicText("three", 10, 2));
    String body = "{\"model\":\"model-a\",\"max_tokens\":64,\"messages\":[]}";
    String features = "claude-code-20250219,interleaved-thinking-2025-05-14, context-1m-2025-08-07";

    EndpointClient.post(socket, MESSAGES, body, Map.of("anthropic-beta", features));
    EndpointClient.post(socket, MESSAGES, body, Map.of("anthropic-beta", "x\"; y=<z>"));
    EndpointClient.post(socket, MESSAGES, body, Map.of("anthropic-beta", "a,".repeat(2000) + "a"));

    List<FakeProvider.Received> received = fake.received();
    assertEquals(3, received.size());
    assertEquals(features, received.get(0).header("anthropic-beta"));
    assertNull(received.get(1).header("anthropic-beta"), "not a list of feature names");
    assertNull(received.get(2).header("anthropic-beta"), "too many names");
  }

  @Test
  void refusesCallsOnceTheBudgetIsSpent() throws Exception {
    Path socket = start(ModelProvider.OPENAI, 100, Duration.ofSeconds(30));
    fake.then(
        fake.openAiText("one", 40, 20),
        fake.openAiText("two", 40, 20),
        fake.openAiText("three", 1, 1));
    CompletableFuture<Usage> exhausted = endpoint.meter().exhaustion();

    EndpointClient.Response first = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
    assertFalse(exhausted.isDone());
    EndpointClient.Response second = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
    EndpointClient.Response third = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");

    assertEquals(200, first.status());
    assertEquals(200, second.status(), "the call that crosses the budget is still answered");
    assertEquals(new Usage(80, 40), exhausted.get(1, TimeUnit.SECONDS));
    assertEquals(429, third.status());
    assertEquals("budget_exceeded", third.errorType());
    assertTrue(third.json().path("error").path("message").asText().contains("100"), third.text());
    assertEquals(2, fake.received().size(), "nothing more reached the provider");
    awaitRecords(3);
    assertFalse(records.get(2).forwarded());
    assertEquals("budget_exceeded", records.get(2).error().split(":")[0]);
  }

  @Test
  void answersNotFoundForAnythingButThePostOfTheProvidersPath() throws Exception {
    Path socket = startOpenAi();
    List<EndpointClient.Response> responses = new ArrayList<>();
    responses.add(
        EndpointClient.exchange(
            socket, ("GET " + CHAT + " HTTP/1.1\r\nhost: x\r\n\r\n").getBytes()));
    responses.add(EndpointClient.post(socket, "/v1/models", "{}"));
    responses.add(EndpointClient.post(socket, MESSAGES, "{}"));
    responses.add(EndpointClient.post(socket, "/v1/chat/completions/../../admin", "{}"));
    responses.add(
        EndpointClient.exchange(
            socket, ("CONNECT api.openai.com:443 HTTP/1.1\r\n\r\n").getBytes()));

    assertEquals(404, responses.get(0).status());
    assertEquals("not_found", responses.get(0).errorType());
    assertEquals(404, responses.get(1).status());
    assertEquals(404, responses.get(2).status());
    assertEquals(404, responses.get(3).status());
    assertEquals(400, responses.get(4).status(), "not even a valid origin-form request");
    assertEquals(0, fake.received().size());
  }

  @Test
  void refusesBodiesOverFourMebibytes() throws Exception {
    Path socket = startOpenAi();
    int max = ModelEndpoint.MAX_BODY_BYTES;
    String template = "{\"messages\":[{\"role\":\"user\",\"content\":\"\"}]}";
    String padding = "x".repeat(max - template.length());
    String exactlyMax = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + padding + "\"}]}";
    assertEquals(max, exactlyMax.length());

    EndpointClient.Response atLimit = EndpointClient.post(socket, CHAT, exactlyMax);
    EndpointClient.Response declared =
        EndpointClient.exchange(
            socket,
            ("POST "
                    + CHAT
                    + " HTTP/1.1\r\n"
                    + "content-length: "
                    + (max + 1)
                    + "\r\nexpect: 100-continue\r\n\r\n")
                .getBytes());
    EndpointClient.Response sent = EndpointClient.post(socket, CHAT, exactlyMax + " ");
    byte[] chunk = ("{\"pad\":\"" + "y".repeat(1 << 20) + "\"}").getBytes();
    byte[] chunked =
        ("POST " + CHAT + " HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n").getBytes();
    for (int i = 0; i < 5; i++) {
      chunked =
          EndpointClient.concat(chunked, (Integer.toHexString(chunk.length) + "\r\n").getBytes());
      chunked = EndpointClient.concat(EndpointClient.concat(chunked, chunk), "\r\n".getBytes());
    }
    EndpointClient.Response chunkedTooLarge = EndpointClient.exchange(socket, chunked);

    assertEquals(200, atLimit.status(), atLimit.text());
    assertEquals(413, declared.status());
    assertFalse(declared.sawContinue(), "the agent is told before it sends the body");
    assertEquals("request_too_large", declared.errorType());
    assertEquals(413, sent.status());
    assertEquals(413, chunkedTooLarge.status());
    assertEquals(1, fake.received().size());
    awaitRecords(4);
    ModelCallRecord chunkedRecord =
        records.stream()
            .filter(r -> r.status() == 413 && r.request().length > 0)
            .findFirst()
            .orElseThrow();
    assertEquals(ModelEndpoint.RECORDED_REQUEST_BYTES, chunkedRecord.request().length);
    assertTrue(chunkedRecord.truncated());
  }

  @Test
  void aLongRequestIsRecordedByItsStartAndItsEnd() {
    byte[] body =
        ("{\"system\":\"rules\",\"messages\":["
                + "\"x\",".repeat(100_000)
                + "\"newest tool result\"]}")
            .getBytes(StandardCharsets.UTF_8);
    byte[] recorded = ModelExchange.recordedRequest(body, 4096);
    String text = new String(recorded, StandardCharsets.UTF_8);
    assertEquals(4096, recorded.length);
    assertTrue(text.startsWith("{\"system\":\"rules\",\"messages\":["), text);
    assertTrue(text.endsWith("\"x\",\"newest tool result\"]}"), text);
    assertTrue(
        text.contains(
            "\u2026 "
                + body.length
                + " bytes in all; "
                + (body.length - 4096)
                + "+ bytes in the middle are not recorded \u2026"),
        text);
    byte[] small = "{\"messages\":[]}".getBytes(StandardCharsets.UTF_8);
    assertEquals(
        small, ModelExchange.recordedRequest(small, 4096), "a request that fits is kept as it is");
  }

  @Test
  void readsChunkedBodiesAndAnswersContinue() throws Exception {
    Path socket = startOpenAi();
    String json = "{\"messages\":[{\"role\":\"user\",\"content\":\"chunked\"}]}";
    byte[] request =
        ("POST "
                + CHAT
                + " HTTP/1.1\r\ntransfer-encoding: chunked\r\nexpect: 100-continue\r\n\r\n"
                + Integer.toHexString(10)
                + "\r\n"
                + json.substring(0, 10)
                + "\r\n"
                + Integer.toHexString(json.length() - 10)
                + ";ext=1\r\n"
                + json.substring(10)
                + "\r\n0\r\n\r\n")
            .getBytes();

    EndpointClient.Response response = EndpointClient.exchange(socket, request);

    assertEquals(200, response.status(), response.text());
    assertTrue(response.sawContinue());
    assertEquals(
        "chunked", fake.received().get(0).json().path("messages").path(0).path("content").asText());
    awaitRecords(1);
    assertArrayEquals(
        json.getBytes(), records.get(0).request(), "the record keeps the body the agent sent");
  }

  @Test
  void refusesMalformedRequests() throws Exception {
    Path socket = startOpenAi();
    assertEquals(400, EndpointClient.post(socket, CHAT, "not json").status());
    assertEquals(400, EndpointClient.post(socket, CHAT, "[1,2]").status());
    assertEquals(400, EndpointClient.post(socket, CHAT, "{\"model\":42}").status());
    assertEquals(
        400,
        EndpointClient.post(socket, CHAT, "{\"model\":\"model-a\",\"model\":\"gpt-x\"}").status(),
        "a duplicated key is ambiguous");
    assertEquals(
        400,
        EndpointClient.exchange(
                socket,
                ("POST "
                        + CHAT
                        + " HTTP/1.1\r\ncontent-length: 2\r\n"
                        + "transfer-encoding: chunked\r\n\r\n{}")
                    .getBytes())
            .status());
    assertEquals(
        431,
        EndpointClient.exchange(
                socket,
                ("POST " + CHAT + " HTTP/1.1\r\nx-big: " + "a".repeat(70_000) + "\r\n\r\n")
                    .getBytes())
            .status());
    assertEquals(0, fake.received().size());
  }

  @Test
  void anUpstreamTimeoutIsA504WithAJsonError() throws Exception {
    Path socket = start(ModelProvider.OPENAI, 200_000, Duration.ofSeconds(1));
    fake.then(request -> fake.openAiText("late", 10, 10).apply(request).delayed(4000));

    long started = System.nanoTime();
    EndpointClient.Response response = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");

    assertTrue(
        System.nanoTime() - started < TimeUnit.SECONDS.toNanos(3), "answered at the timeout");
    assertEquals(504, response.status());
    assertEquals("upstream_timeout", response.errorType());
    assertEquals(Usage.NONE, endpoint.meter().spent());
    awaitRecords(1);
    assertTrue(records.get(0).forwarded());
    assertFalse(records.get(0).answered());
    assertTrue(records.get(0).egressFailure().startsWith("upstream_timeout"));
  }

  @Test
  void anUnreachableProviderIsA502() throws Exception {
    Path socket = startOpenAi();
    fake.close();
    EndpointClient.Response response = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
    assertEquals(502, response.status());
    assertEquals("upstream_unreachable", response.errorType());
  }

  @Test
  void aProviderThatClosesTheConnectionBeforeAnsweringIsA502Dropped() throws Exception {
    Path socket = startOpenAi();
    fake.then(new FakeProvider.Reply(200, Map.of(), "{}", 0).droppedAfter(0));
    EndpointClient.Response response = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
    assertEquals(502, response.status());
    assertEquals("upstream_dropped", response.errorType());
    awaitRecords(1);
    assertTrue(records.get(0).egressFailure().startsWith("upstream_dropped"));
  }

  @Test
  void providerErrorsArePassedThroughAndRecorded() throws Exception {
    Path socket = startOpenAi();
    fake.then(
        FakeProvider.openAiRateLimited(7),
        FakeProvider.openAiError(500, "server_error", null, "The server had an error"));

    EndpointClient.Response limited = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
    EndpointClient.Response broken = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");

    assertEquals(429, limited.status());
    assertEquals("7", limited.headers().get("retry-after"));
    assertEquals("0", limited.headers().get("x-ratelimit-remaining-requests"));
    assertEquals("requests", limited.errorType(), "the provider's own error, not budget_exceeded");
    assertEquals("rate_limit_exceeded", limited.json().path("error").path("code").asText());
    assertEquals(500, broken.status());
    assertEquals("server_error", broken.errorType());
    awaitRecords(2);
    assertEquals("provider answered 429 (requests)", records.get(0).error());
    assertEquals("provider answered 500 (server_error)", records.get(1).error());
    assertTrue(records.get(0).answered());
    assertNull(records.get(0).egressFailure(), "the provider was reached");
  }

  @Test
  void anthropicErrorsArePassedThrough() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC, 200_000, Duration.ofSeconds(30));
    fake.then(
        FakeProvider.anthropicRateLimited(3),
        FakeProvider.anthropicError(529, "overloaded_error", "Overloaded"));

    EndpointClient.Response limited =
        EndpointClient.post(socket, MESSAGES, "{\"max_tokens\":10,\"messages\":[]}");
    EndpointClient.Response overloaded =
        EndpointClient.post(socket, MESSAGES, "{\"max_tokens\":10,\"messages\":[]}");

    assertEquals(429, limited.status());
    assertEquals("3", limited.headers().get("retry-after"));
    assertEquals("rate_limit_error", limited.errorType());
    assertEquals(529, overloaded.status());
    assertEquals("error", overloaded.json().path("type").asText());
    assertEquals("overloaded_error", overloaded.errorType());
  }

  @Test
  void theSocketIsOpenToTheContainerUserAndGoneAfterClose() throws Exception {
    Path socket = startOpenAi();
    assertEquals(
        PosixFilePermissions.fromString("rw-rw-rw-"), Files.getPosixFilePermissions(socket));
    endpoint.close();
    assertFalse(Files.exists(socket));
  }

  @Test
  void closeAbortsACallInFlightAndRecordsIt() throws Exception {
    Path socket = startOpenAi();
    fake.then(request -> fake.openAiText("never", 10, 10).apply(request).delayed(20_000));
    CompletableFuture<Throwable> call =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
                return null;
              } catch (Exception e) {
                return e;
              }
            });
    awaitCondition(() -> fake.received().size() == 1);

    long started = System.nanoTime();
    endpoint.close();

    assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5));
    call.get(5, TimeUnit.SECONDS);
    awaitRecords(1);
    assertEquals(Usage.NONE, records.get(0).usage());
  }

  @Test
  void connectionsBeyondTheLimitAreTurnedAway() throws Exception {
    Path socket = startOpenAi();
    List<SocketChannel> idle = new ArrayList<>();
    try {
      for (int i = 0; i < ModelEndpoint.MAX_CONNECTIONS; i++) {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(socket));
        idle.add(channel);
      }
      awaitCondition(
          () -> {
            EndpointClient.Response response = EndpointClient.post(socket, CHAT, "{}");
            return response.status() == 503 && "busy".equals(response.errorType());
          });
    } finally {
      for (SocketChannel channel : idle) {
        channel.close();
      }
    }
    awaitCondition(() -> EndpointClient.post(socket, CHAT, "{\"messages\":[]}").status() == 200);
  }

  @Test
  void aOneShotClientFreesItsConnectionAtOnceSoFiftyCallsInARowAllSucceed() throws Exception {
    Path socket = startOpenAi();

    // Each opens a connection, reads its answer and closes, as a curl in a job's script does.
    for (int i = 0; i < 50; i++) {
      EndpointClient.Response response = EndpointClient.post(socket, CHAT, "{\"messages\":[]}");
      assertEquals(200, response.status(), "call " + i + ": " + response.text());
    }

    assertEquals(50, fake.received().size());
  }

  @Test
  void aClientThatClosesItsSideAfterTheRequestStillGetsTheAnswerThenTheConnectionCloses()
      throws Exception {
    Path socket = startOpenAi();
    fake.then(request -> fake.openAiText("late", 10, 2).apply(request).delayed(300));

    try (EndpointClient.Connection connection = EndpointClient.Connection.open(socket)) {
      connection.send(EndpointClient.request(CHAT, "{\"messages\":[]}", Map.of()));
      connection.shutdownOutput();
      EndpointClient.Response response = connection.readResponse();

      assertEquals(200, response.status(), response.text());
      assertTrue(response.text().contains("late"), response.text());
      assertTrue(connection.closedByPeer(), "nothing more can come on it: closed after the answer");
    }
  }

  @Test
  void aClientAskingConnectionCloseIsRecordedAtWhatTheMeterCounted() throws Exception {
    Path socket = start(ModelProvider.ANTHROPIC, 1_000_000, Duration.ofSeconds(30));
    fake.then(
        fake.anthropicText("plain", 98_000, 1_000),
        fake.anthropicToolUse("Write", "{\"file_path\":\"a\"}", 97_000, 2_000));
    Map<String, String> close = Map.of("connection", "close");

    EndpointClient.Response plain =
        EndpointClient.post(socket, MESSAGES, "{\"max_tokens\":64,\"messages\":[]}", close);
    EndpointClient.Response streamed =
        EndpointClient.post(
            socket, MESSAGES, "{\"max_tokens\":64,\"stream\":true,\"messages\":[]}", close);

    assertEquals(200, plain.status(), plain.text());
    assertEquals(200, streamed.status(), streamed.text());
    awaitRecords(2);
    assertEquals(new Usage(195_000, 3_000), endpoint.meter().spent());
    assertEquals(
        List.of(new Usage(98_000, 1_000), new Usage(97_000, 2_000)),
        records.stream().map(ModelCallRecord::usage).toList(),
        "each record is the call's usage, not an estimate");
    for (ModelCallRecord record : records) {
      assertNull(record.error(), "the agent got the whole answer: " + record.error());
    }
  }

  private void awaitRecords(int count) throws Exception {
    awaitCondition(() -> records.size() >= count);
  }

  interface Check {
    boolean holds() throws Exception;
  }

  static void awaitCondition(Check check) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!check.holds()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(50);
    }
  }
}
