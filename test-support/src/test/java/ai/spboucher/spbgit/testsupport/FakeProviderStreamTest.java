package ai.spboucher.spbgit.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The fake's streamed modes, read the way an SSE client reads them: event by event off a chunked
 * body.
 */
class FakeProviderStreamTest {

  static final String KEY = "sk-fake-stream";
  static final String STREAMED = "{\"model\":\"m\",\"stream\":true,\"messages\":[]}";
  final HttpClient http = HttpClient.newHttpClient();
  FakeProvider fake;

  @BeforeEach
  void start() throws IOException {
    fake = FakeProvider.start(KEY);
  }

  @AfterEach
  void stop() {
    fake.close();
  }

  /** The data lines of the stream, in order, and the response's transfer encoding. */
  record Stream(String transferEncoding, List<String> eventNames, List<JsonNode> data) {}

  Stream post(String path, String body, String authHeader, String authValue) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(fake.baseUrl() + path))
            .header(authHeader, authValue)
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    HttpResponse<java.io.InputStream> response =
        http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, response.statusCode());
    assertEquals(
        "text/event-stream; charset=utf-8",
        response.headers().firstValue("content-type").orElse(""));
    List<String> names = new ArrayList<>();
    List<JsonNode> data = new ArrayList<>();
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (line.startsWith("event: ")) {
          names.add(line.substring(7));
        } else if (line.startsWith("data: ") && !line.equals("data: [DONE]")) {
          data.add(FakeProvider.JSON.readTree(line.substring(6)));
        } else if (line.equals("data: [DONE]")) {
          names.add("[DONE]");
        }
      }
    }
    return new Stream(response.headers().firstValue("transfer-encoding").orElse(""), names, data);
  }

  @Test
  void streamsAChatToolCallAsDeltasAndReportsUsageLastWhenAsked() throws Exception {
    fake.then(
        fake.toolCall("write_file", "{\"file_path\":\"/w/a.txt\",\"content\":\"hi\"}", 120, 30));

    Stream stream =
        post(
            "/v1/chat/completions",
            "{\"model\":\"m\",\"stream\":true,"
                + "\"stream_options\":{\"include_usage\":true},\"messages\":[]}",
            "authorization",
            "Bearer " + KEY);

    assertEquals("chunked", stream.transferEncoding());
    StringBuilder arguments = new StringBuilder();
    for (JsonNode chunk : stream.data()) {
      JsonNode call = chunk.path("choices").path(0).path("delta").path("tool_calls").path(0);
      arguments.append(call.path("function").path("arguments").asText(""));
    }
    assertEquals("{\"file_path\":\"/w/a.txt\",\"content\":\"hi\"}", arguments.toString());
    assertEquals(
        "write_file",
        stream.data().get(0).at("/choices/0/delta/tool_calls/0/function/name").asText());
    JsonNode last = stream.data().get(stream.data().size() - 1);
    assertEquals(0, last.path("choices").size());
    assertEquals(120, last.at("/usage/prompt_tokens").asLong());
    assertEquals(30, last.at("/usage/completion_tokens").asLong());
    assertEquals(
        "tool_calls",
        stream.data().get(stream.data().size() - 2).at("/choices/0/finish_reason").asText());
    assertEquals(List.of("[DONE]"), stream.eventNames());
    assertEquals(new FakeProvider.Usage(120, 0, 30), fake.reportedUsage());
  }

  @Test
  void streamsAChatReplyWithoutUsageWhenNotAsked() throws Exception {
    Stream stream =
        post(
            "/v1/chat/completions",
            "{\"model\":\"m\",\"stream\":true,\"messages\":[]}",
            "authorization",
            "Bearer " + KEY);

    assertTrue(
        stream.data().stream().noneMatch(chunk -> chunk.has("usage")), stream.data().toString());
    assertEquals(new FakeProvider.Usage(0, 0, 0), fake.reportedUsage());
  }

  @Test
  void streamsAResponsesFunctionCallEndingInCompletedWithUsage() throws Exception {
    fake.then(fake.toolCall("exec_command", "{\"cmd\":\"ls\"}", 200, 40));

    Stream stream =
        post(
            "/v1/responses",
            "{\"model\":\"m\",\"stream\":true,\"input\":[]}",
            "authorization",
            "Bearer " + KEY);

    assertEquals(
        List.of(
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed"),
        stream.eventNames());
    JsonNode done = stream.data().get(7).path("item");
    assertEquals("exec_command", done.path("name").asText());
    assertEquals("{\"cmd\":\"ls\"}", done.path("arguments").asText());
    JsonNode completed = stream.data().get(8).path("response");
    assertEquals(200, completed.at("/usage/input_tokens").asLong());
    assertEquals(40, completed.at("/usage/output_tokens").asLong());
    assertEquals(8, stream.data().get(8).path("sequence_number").asInt());
  }

  @Test
  void answersAResponsesRequestWithoutStreamAsOneResponseObject() throws Exception {
    fake.then(fake.text("All done.", 50, 7));
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/v1/responses"))
            .header("authorization", "Bearer " + KEY)
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\"}"))
            .build();

    JsonNode body =
        FakeProvider.JSON.readTree(http.send(request, HttpResponse.BodyHandlers.ofString()).body());

    assertEquals("response", body.path("object").asText());
    assertEquals("All done.", body.at("/output/0/content/0/text").asText());
    assertEquals(7, body.at("/usage/output_tokens").asLong());
  }

  @Test
  void streamsAnAnthropicToolUseWithUsageInMessageStartAndMessageDelta() throws Exception {
    fake.then(fake.toolCall("Write", "{\"file_path\":\"/w/a.txt\",\"content\":\"hi\"}", 300, 25));

    Stream stream =
        post(
            "/v1/messages?beta=true",
            "{\"model\":\"claude\",\"stream\":true,\"messages\":[]}",
            "x-api-key",
            KEY);

    assertEquals("message_start", stream.eventNames().get(0));
    assertEquals("message_stop", stream.eventNames().get(stream.eventNames().size() - 1));
    assertEquals(300, stream.data().get(0).at("/message/usage/input_tokens").asLong());
    StringBuilder input = new StringBuilder();
    for (JsonNode event : stream.data()) {
      if (event.at("/delta/type").asText().equals("input_json_delta")) {
        input.append(event.at("/delta/partial_json").asText());
      }
    }
    assertEquals("{\"file_path\":\"/w/a.txt\",\"content\":\"hi\"}", input.toString());
    JsonNode messageDelta = stream.data().get(stream.data().size() - 2);
    assertEquals("tool_use", messageDelta.at("/delta/stop_reason").asText());
    assertEquals(25, messageDelta.at("/usage/output_tokens").asLong());
    assertEquals("beta=true", fake.received().get(0).query());
  }

  @Test
  void streamsTextAndParallelCallsInEveryApi() throws Exception {
    FakeProvider.Call first = FakeProvider.call("read", Map.of("path", "a"));
    FakeProvider.Call second = FakeProvider.call("list", Map.of("path", "b"));
    for (int i = 0; i < 3; i++) {
      fake.then(fake.toolCalls("Looking.", first, second));
    }

    Stream chat = post("/v1/chat/completions", STREAMED, "authorization", "Bearer " + KEY);
    Stream responses = post("/v1/responses", STREAMED, "authorization", "Bearer " + KEY);
    Stream messages = post("/v1/messages", STREAMED, "x-api-key", KEY);

    StringBuilder text = new StringBuilder();
    Map<Integer, StringBuilder> arguments = new TreeMap<>();
    for (JsonNode chunk : chat.data()) {
      text.append(chunk.at("/choices/0/delta/content").asText(""));
      for (JsonNode call : chunk.at("/choices/0/delta/tool_calls")) {
        arguments
            .computeIfAbsent(call.path("index").asInt(), index -> new StringBuilder())
            .append(call.at("/function/arguments").asText());
      }
    }
    assertEquals("Looking.", text.toString());
    assertEquals("{0={\"path\":\"a\"}, 1={\"path\":\"b\"}}", arguments.toString());
    JsonNode output = responses.data().get(responses.data().size() - 1).at("/response/output");
    assertEquals("Looking.", output.at("/0/content/0/text").asText());
    assertEquals("list", output.at("/2/name").asText());
    assertEquals("{\"path\":\"b\"}", output.at("/2/arguments").asText());
    List<String> blocks = new ArrayList<>();
    for (JsonNode event : messages.data()) {
      if (event.path("type").asText().equals("content_block_start")) {
        blocks.add(event.at("/content_block/type").asText());
      }
    }
    assertEquals(List.of("text", "tool_use", "tool_use"), blocks);
  }

  @Test
  void marksATurnCutOffAtTheTokenLimitInEveryApi() throws Exception {
    for (int i = 0; i < 3; i++) {
      fake.then(fake.truncated("Half", FakeProvider.call("write", Map.of("path", "a"))));
    }

    Stream chat = post("/v1/chat/completions", STREAMED, "authorization", "Bearer " + KEY);
    Stream responses = post("/v1/responses", STREAMED, "authorization", "Bearer " + KEY);
    Stream messages = post("/v1/messages", STREAMED, "x-api-key", KEY);

    assertEquals(
        "length", chat.data().get(chat.data().size() - 1).at("/choices/0/finish_reason").asText());
    List<String> names = responses.eventNames();
    assertEquals("response.incomplete", names.get(names.size() - 1));
    assertEquals(
        "max_output_tokens",
        responses.data().get(names.size() - 1).at("/response/incomplete_details/reason").asText());
    JsonNode messageDelta = messages.data().get(messages.data().size() - 2);
    assertEquals("max_tokens", messageDelta.at("/delta/stop_reason").asText());
  }

  @Test
  void countsTokensWithoutTakingAScriptedTurn() throws Exception {
    fake.then(fake.text("scripted", 1, 1));
    HttpRequest count =
        HttpRequest.newBuilder(URI.create(fake.baseUrl() + "/v1/messages/count_tokens"))
            .header("x-api-key", KEY)
            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"c\",\"messages\":[]}"))
            .build();

    JsonNode body =
        FakeProvider.JSON.readTree(http.send(count, HttpResponse.BodyHandlers.ofString()).body());
    Stream stream =
        post("/v1/messages", "{\"model\":\"c\",\"stream\":true,\"messages\":[]}", "x-api-key", KEY);

    assertTrue(body.path("input_tokens").asLong() > 0, body.toString());
    assertTrue(
        stream.data().stream().anyMatch(event -> event.at("/delta/text").asText().contains("scr")));
  }

  @Test
  void dropsTheConnectionMidStreamWithoutTheLastChunk() throws Exception {
    fake.then(request -> fake.text("never finished", 10, 10).apply(request).droppedAfter(2));

    assertThrows(
        IOException.class,
        () -> post("/v1/messages", "{\"model\":\"c\",\"stream\":true}", "x-api-key", KEY));
    assertEquals(new FakeProvider.Usage(0, 0, 0), fake.reportedUsage());
  }

  @Test
  void pausesBetweenEventsWhenSlowed() throws Exception {
    fake.then(request -> fake.text("slow", 10, 10).apply(request).slowed(100));
    long started = System.nanoTime();

    Stream stream =
        post(
            "/v1/chat/completions",
            "{\"model\":\"m\",\"stream\":true}",
            "authorization",
            "Bearer " + KEY);

    long elapsedMs = (System.nanoTime() - started) / 1_000_000;
    assertTrue(
        elapsedMs >= 100L * (stream.data().size()), elapsedMs + " ms for " + stream.data().size());
  }
}
