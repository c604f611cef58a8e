package ai.spboucher.spbgit.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a {@link Stack} hands its parts and in which order it closes them, with launchers that
 * record instead of starting anything (registered in this module's test resources).
 */
class StackTest {

  /** What the launchers saw, in order: "gateway <dir> <config>", "runner <env>", "close ...". */
  static final List<String> EVENTS = new CopyOnWriteArrayList<>();

  @TempDir Path tmp;

  @BeforeEach
  void clear() {
    EVENTS.clear();
  }

  @Test
  void givesTheGatewayAndRunnersTheStacksNatsUnlessTheyNameTheirOwnAndClosesThemInReverse()
      throws Exception {
    try (Stack stack =
        Stack.builder(tmp)
            .natsAt("nats://127.0.0.1:4")
            .gatewayDir("gw")
            .gateway(new JsonObject().put("natsUrl", "nats://127.0.0.1:5").put("model", "m"))
            .runner("r1", Map.of("SPB_LIMIT_CPUS", "1"))
            .runner("r2", Map.of("SPB_NATS_URL", "nats://127.0.0.1:6", "SPB_RUNNER_ID", "own"))
            .start()) {
      assertEquals("http://agent:t0k@127.0.0.1:9/demo.git", stack.pushUrl("demo", "t0k"));
      assertEquals("http://127.0.0.1:9", stack.owner().baseUrl());
    }
    assertEquals(
        List.of(
            "gateway "
                + tmp.resolve("gw")
                + " {\"natsUrl\":\"nats://127.0.0.1:5\",\"model\":\"m\"}",
            "runner {SPB_LIMIT_CPUS=1, SPB_NATS_URL=nats://127.0.0.1:4, SPB_RUNNER_ID=r1}",
            "runner {SPB_NATS_URL=nats://127.0.0.1:6, SPB_RUNNER_ID=own}",
            "close runner own",
            "close runner r1",
            "close gateway"),
        EVENTS);
  }

  @Test
  void aGatewayWithoutNatsGetsNoUrlAndARestartUsesTheSameDataAndTheClockGiven() throws Exception {
    Clock later = Clock.offset(Clock.systemUTC(), java.time.Duration.ofHours(1));
    try (Stack stack = Stack.builder(tmp).gateway(new JsonObject()).start()) {
      stack.restartGateway(later);
      assertThrows(IllegalStateException.class, stack::startGateway, "one gateway at a time");
    }
    assertEquals(
        List.of(
            "gateway " + tmp.resolve("data") + " {}",
            "close gateway",
            "gateway " + tmp.resolve("data") + " {} (own clock)",
            "close gateway"),
        EVENTS);
  }

  @Test
  void aStackWithoutAGatewaySaysSo() throws Exception {
    try (Stack stack = Stack.builder(tmp).start()) {
      assertThrows(IllegalStateException.class, stack::gateway);
      assertThrows(IllegalStateException.class, stack::owner);
      assertEquals(List.of(), EVENTS);
    }
  }

  /** Records the start, and later the close, of a gateway on port 9. */
  public static final class RecordingGateway implements StackLaunchers.Gateway {
    @Override
    public StackGateway start(Path dataDir, JsonObject config, Clock clock) {
      EVENTS.add(
          "gateway "
              + dataDir
              + " "
              + config.encode()
              + (clock.getClass() == Clock.systemUTC().getClass() ? "" : " (own clock)"));
      return new StackGateway() {
        @Override
        public String baseUrl() {
          return "http://127.0.0.1:9";
        }

        @Override
        public Path dataDir() {
          return dataDir;
        }

        @Override
        public String ownerToken() {
          return "owner";
        }

        @Override
        public void close() {
          EVENTS.add("close gateway");
        }
      };
    }
  }

  /** Records the start, and later the close, of a runner. */
  public static final class RecordingRunner implements StackLaunchers.Runner {
    @Override
    public AutoCloseable start(Map<String, String> env) {
      EVENTS.add("runner " + new java.util.TreeMap<>(env));
      return () -> EVENTS.add("close runner " + env.get("SPB_RUNNER_ID"));
    }
  }
}
