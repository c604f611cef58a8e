package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nats.client.Options;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class NatsClientOptionsTest {

  @Test
  void takesSeveralServersCommaSeparated() throws Exception {
    Options options = NatsClientOptions.from(Map.of("SPB_NATS_URL",
        "nats://127.0.0.1:4222, nats://127.0.0.2:4223,nats://127.0.0.3:4224"), "nats://127.0.0.1:1").build();
    assertEquals(List.of("nats://127.0.0.1:4222", "nats://127.0.0.2:4223", "nats://127.0.0.3:4224"),
        options.getServers().stream().map(URI::toString).toList());
  }

  @Test
  void fallsBackToTheDefaultUrl() throws Exception {
    Options options = NatsClientOptions.from(Map.of(), "nats://127.0.0.1:4222").build();
    assertEquals(List.of("nats://127.0.0.1:4222"), options.getServers().stream().map(URI::toString).toList());
  }
}
