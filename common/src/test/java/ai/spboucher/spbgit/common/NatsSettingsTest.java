package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nats.client.Options;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NatsSettingsTest {

  @Test
  void takesSeveralServersCommaSeparated() throws Exception {
    Options options =
        NatsSettings.fromEnvironment(
                Map.of(
                    "SPB_NATS_URL",
                    "nats://127.0.0.1:4222, nats://127.0.0.2:4223,nats://127.0.0.3:4224"))
            .options()
            .build();
    assertEquals(
        List.of("nats://127.0.0.1:4222", "nats://127.0.0.2:4223", "nats://127.0.0.3:4224"),
        options.getServers().stream().map(URI::toString).toList());
  }

  @Test
  void fallsBackToTheDefaultUrl() throws Exception {
    Options options = NatsSettings.fromEnvironment(Map.of()).options().build();
    assertEquals(
        List.of("nats://127.0.0.1:4222"),
        options.getServers().stream().map(URI::toString).toList());
  }

  @Test
  void refusesAtStartUpWhatWouldOnlyFailWhenConnecting(@TempDir Path tmp) {
    for (Map<String, String> env :
        List.of(
            Map.of("SPB_NATS_URL", "http://127.0.0.1:4222"),
            Map.of("SPB_NATS_CREDS", tmp.resolve("missing.creds").toString()),
            Map.of("SPB_NATS_CA", tmp.resolve("missing-ca.pem").toString()),
            Map.of("SPB_JOB_ACK_WAIT", "0s"),
            Map.of("SPB_JOB_ACK_WAIT", "2h"),
            Map.of("SPB_JOB_ACK_WAIT", "soon"),
            Map.of(
                "SPB_NATS_USER",
                "runner",
                "SPB_NATS_PASSWORD_FILE",
                tmp.resolve("missing.pw").toString()))) {
      IllegalArgumentException refused =
          assertThrows(
              IllegalArgumentException.class,
              () -> NatsSettings.fromEnvironment(env),
              env.toString());
      assertTrue(
          refused
              .getMessage()
              .contains(
                  env.keySet().stream()
                      .filter(k -> !k.equals("SPB_NATS_USER"))
                      .findFirst()
                      .orElseThrow()),
          refused.getMessage());
    }
  }

  @Test
  void readsTheJobAckWaitWithThirtySecondsByDefault() {
    assertEquals(Duration.ofSeconds(30), NatsSettings.fromEnvironment(Map.of()).jobAckWait());
    assertEquals(
        Duration.ofSeconds(3),
        NatsSettings.fromEnvironment(Map.of("SPB_JOB_ACK_WAIT", "3s")).jobAckWait());
  }

  @Test
  void readsThePasswordFileOnceAndNeverShowsThePassword(@TempDir Path tmp) throws Exception {
    Path file = Files.writeString(tmp.resolve("runner.pw"), "s3cret\n");
    NatsSettings settings =
        NatsSettings.fromEnvironment(
            Map.of("SPB_NATS_USER", "runner", "SPB_NATS_PASSWORD_FILE", file.toString()));
    Files.delete(file);
    assertEquals("s3cret", settings.password());
    assertEquals(
        settings,
        NatsSettings.fromEnvironment(
            Map.of("SPB_NATS_USER", "runner", "SPB_NATS_PASSWORD", "s3cret")));
    assertFalse(settings.toString().contains("s3cret"), settings.toString());
    assertEquals("runner", new String(settings.options().build().getUsernameChars()));
  }
}
