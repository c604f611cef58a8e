package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The key redaction and the event scanning hold for a stream split at any byte. */
class StreamPiecesTest {

  static final byte[] KEY = ModelEndpointTest.KEY.getBytes(StandardCharsets.US_ASCII);

  @Test
  void blanksTheKeyWhereverTheStreamIsSplit() {
    String stream =
        "data: {\"a\":\"" + ModelEndpointTest.KEY + "\"}\n\ndata: sk-run " + ModelEndpointTest.KEY;
    String expected = "data: {\"a\":\"[redacted]\"}\n\ndata: sk-run [redacted]";
    byte[] bytes = stream.getBytes(StandardCharsets.US_ASCII);
    for (int a = 0; a <= bytes.length; a++) {
      for (int b = a; b <= bytes.length; b += 7) {
        KeyRedactor redactor = new KeyRedactor(KEY);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(redactor.feed(bytes, 0, a));
        out.writeBytes(redactor.feed(bytes, a, b));
        out.writeBytes(redactor.feed(bytes, b, bytes.length));
        out.writeBytes(redactor.flush());
        assertEquals(expected, out.toString(StandardCharsets.US_ASCII), a + "/" + b);
      }
    }
  }

  @Test
  void holdsBackOnlyAPossibleStartOfTheKey() {
    KeyRedactor redactor = new KeyRedactor(KEY);
    byte[] event = "data: {\"x\":1}\n\n".getBytes(StandardCharsets.US_ASCII);
    assertEquals(event.length, redactor.feed(event, 0, event.length).length, "passes at once");
    byte[] tail = "data: sk-ru".getBytes(StandardCharsets.US_ASCII);
    assertEquals("data: ", new String(redactor.feed(tail, 0, tail.length)));
    assertEquals("sk-ru", new String(redactor.flush()));
  }

  @Test
  void readsTheSameEventsWhereverTheStreamIsSplit() {
    String stream =
        "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: comment\n\ndata: one\ndata: t\u00e9\n\n"
            + "data:\ndata\ndatum: no\ndata:x\n\n"
            + "event: ping\ndata: {}\r\r";
    byte[] bytes = stream.getBytes(StandardCharsets.UTF_8);
    List<String> whole = scan(bytes, bytes.length);
    assertEquals(List.of("message_start|{\"a\":1}", "|one\nt\u00e9", "|\n\nx", "ping|{}"), whole);
    for (int split = 0; split <= bytes.length; split++) {
      assertEquals(whole, scan(bytes, split), "split at " + split);
    }
  }

  private static List<String> scan(byte[] bytes, int split) {
    SseScanner scanner = new SseScanner();
    List<String> events = new ArrayList<>();
    SseScanner.Listener listener = (event, data, end) -> events.add(event + "|" + data);
    scanner.scan(bytes, 0, split, listener);
    scanner.scan(bytes, split, bytes.length, listener);
    return events;
  }
}
