package ai.spboucher.spbgit.testsupport;

import ai.spboucher.spbgit.testsupport.FakeProvider.Received;
import ai.spboucher.spbgit.testsupport.FakeProvider.Reply;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP exchange of a {@link FakeProvider}: the request as {@link Received}, and a {@link Reply}
 * written the way it asks (delayed, as one body, or as events flushed one by one, slowed or dropped
 * midway).
 *
 * <p>Threading: called on the provider's request threads; blocks for the reply's delays.
 */
final class ProviderExchange {

  /** Told after each event a stream wrote, with the count so far; may block to hold the stream. */
  interface EventListener {
    void afterEvent(int events) throws InterruptedException;
  }

  /** Thrown out of the exchange so the server closes the socket without ending the chunked body. */
  private static final class DroppedStream extends RuntimeException {
    private static final long serialVersionUID = 1L;

    DroppedStream() {
      super("stream dropped by the script", null, false, false);
    }
  }

  private ProviderExchange() {}

  /** The request, its header names in lower case. */
  static Received read(HttpExchange exchange) throws IOException {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    exchange
        .getRequestHeaders()
        .forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT), List.copyOf(values)));
    return new Received(
        exchange.getRequestMethod(),
        exchange.getRequestURI().getPath(),
        exchange.getRequestURI().getRawQuery(),
        headers,
        exchange.getRequestBody().readAllBytes());
  }

  /** Writes {@code reply}; the caller closes the exchange. */
  static void write(HttpExchange exchange, Reply reply, EventListener listener)
      throws IOException, InterruptedException {
    if (reply.delayMs() > 0) {
      Thread.sleep(reply.delayMs());
    }
    exchange.getResponseHeaders().set("set-cookie", "__cf_bm=fake; path=/");
    if (!reply.isStream() && reply.dropAfterEvents() >= 0) {
      throw new DroppedStream();
    }
    if (reply.isStream()) {
      stream(exchange, reply, listener);
      return;
    }
    byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("content-type", "application/json");
    reply.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
    // A HEAD (Claude Code's connectivity probe) gets the status alone.
    boolean head = exchange.getRequestMethod().equals("HEAD");
    exchange.sendResponseHeaders(reply.status(), body.length == 0 || head ? -1 : body.length);
    if (!head) {
      exchange.getResponseBody().write(body);
    }
  }

  /**
   * Writes each event as its own chunk and flushes it, so the client sees the stream as it is
   * produced.
   */
  private static void stream(HttpExchange exchange, Reply reply, EventListener listener)
      throws IOException, InterruptedException {
    exchange.getResponseHeaders().set("content-type", "text/event-stream; charset=utf-8");
    exchange.getResponseHeaders().set("cache-control", "no-cache");
    reply.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
    exchange.sendResponseHeaders(reply.status(), 0);
    OutputStream out = exchange.getResponseBody();
    for (int i = 0; i < reply.events().size(); i++) {
      if (i == reply.dropAfterEvents()) {
        // HttpServer closes the connection, without the terminating chunk, when a handler throws.
        throw new DroppedStream();
      }
      out.write(reply.events().get(i).getBytes(StandardCharsets.UTF_8));
      out.flush();
      listener.afterEvent(i + 1);
      if (reply.eventGapMs() > 0) {
        Thread.sleep(reply.eventGapMs());
      }
    }
  }
}
