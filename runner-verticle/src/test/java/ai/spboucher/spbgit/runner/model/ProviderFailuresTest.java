package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.http.HttpClosedException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ProviderFailuresTest {

  @Test
  void aCallWithoutAnAnswerIsRefusedForWhatHappened() {
    assertRefusal(
        499,
        "agent_disconnected",
        ProviderFailures.beforeAnswer(new TimeoutException(), true, true, 120));
    assertRefusal(
        504,
        "upstream_timeout",
        ProviderFailures.beforeAnswer(new TimeoutException(), false, false, 120));
    assertEquals(
        "the provider did not answer within 120 s (SPB_MODEL_TIMEOUT)",
        ProviderFailures.beforeAnswer(new TimeoutException(), false, false, 120).getMessage());
    assertRefusal(
        502,
        "upstream_dropped",
        ProviderFailures.beforeAnswer(new HttpClosedException("closed"), false, true, 120));
    assertRefusal(
        502,
        "upstream_unreachable",
        ProviderFailures.beforeAnswer(new HttpClosedException("closed"), false, false, 120));
    assertEquals(
        "cannot reach the provider: ConnectException",
        ProviderFailures.beforeAnswer(new ConnectException("refused"), false, false, 120)
            .getMessage());
  }

  @Test
  void anAnswerThatBrokeOffSaysWhy() {
    assertEquals(
        "the provider sent nothing for 30 s (SPB_MODEL_TIMEOUT)",
        ProviderFailures.duringAnswer(true, 30));
    assertEquals(
        "the provider dropped the connection during its answer",
        ProviderFailures.duringAnswer(false, 30));
  }

  @Test
  void theRecordNamesTheApisErrorTypeOrCode() {
    assertNull(ProviderFailures.errorOf(200, bytes("{}")));
    assertEquals(
        "provider answered 429 (rate_limit_error)",
        ProviderFailures.errorOf(429, bytes("{\"error\":{\"type\":\"rate_limit_error\"}}")));
    assertEquals(
        "provider answered 400 (context_length_exceeded)",
        ProviderFailures.errorOf(
            400, bytes("{\"error\":{\"type\":null,\"code\":\"context_length_exceeded\"}}")));
    assertEquals("provider answered 502", ProviderFailures.errorOf(502, bytes("<html>")));
    assertEquals("provider answered 500", ProviderFailures.errorOf(500, null));
  }

  private static void assertRefusal(int status, String type, Refusal refusal) {
    assertEquals(status, refusal.status());
    assertEquals(type, refusal.type());
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
