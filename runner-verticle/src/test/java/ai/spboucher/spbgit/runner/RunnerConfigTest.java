package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RunnerConfigTest {

  @Test
  void defaultsMatchTheReadme() {
    RunnerConfig config = RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r1"));
    assertEquals("nats://127.0.0.1:4222", config.natsUrl());
    assertEquals(1, config.slots());
    assertEquals("spbgit/agent:latest", config.agentImage());
    assertEquals(2.0, config.cpus());
    assertEquals(4L << 30, config.memoryBytes());
    assertEquals(2L << 30, config.diskBytes());
    assertEquals(Duration.ofMinutes(30), config.wallLimit());
    assertEquals(List.of(), config.egressAllow());
    assertEquals(2_000_000_000, config.sandboxUid());
    assertEquals(2L << 30, config.cacheBytes());
    assertEquals(ImageCatalogue.parse("", "spbgit/agent:latest"), config.images());
  }

  @Test
  void refusesRootAndUidsPastTwoToTheThirtyFirstAsTheSandboxUid() {
    for (String uid : List.of("0", "-5", "2147483648", "1000:1000", "")) {
      assertThrows(IllegalArgumentException.class,
          () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_SANDBOX_UID", uid)), uid);
    }
    assertEquals(70_000, RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_SANDBOX_UID", "70000"))
        .sandboxUid());
  }

  @Test
  void knowsWhenItSharesTheGatewaysNode() {
    assertTrue(config("nats://127.0.0.1:4222").natsOnThisMachine());
    assertTrue(config("nats://localhost:4222,nats://127.0.0.2:4223").natsOnThisMachine());
    assertTrue(config("tls://[::1]:4222").natsOnThisMachine());
    assertFalse(config("tls://gateway.example.org:4222").natsOnThisMachine());
    assertFalse(config("nats://127.0.0.1:4222,nats://10.0.0.7:4222").natsOnThisMachine(),
        "one server elsewhere: the runner is another node's");
    assertFalse(config("nats://127.0.0.1.example.org:4222").natsOnThisMachine());
  }

  private static RunnerConfig config(String natsUrl) {
    return RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r1", "SPB_NATS_URL", natsUrl));
  }

  @Test
  void readsLimitsAndAllowList() {
    RunnerConfig config = RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r1", "SPB_LIMIT_MEMORY", "512m",
        "SPB_LIMIT_WALL", "90s", "SPB_EGRESS_ALLOW", "api.example.org:443, models.internal:8000"));
    assertEquals(512L << 20, config.memoryBytes());
    assertEquals(Duration.ofSeconds(90), config.wallLimit());
    assertEquals(List.of("api.example.org:443", "models.internal:8000"), config.egressAllow());
  }

  @Test
  void failsFastOnNonsense() {
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "bad id")));
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_RUNNER_SLOTS", "0")));
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_LIMIT_MEMORY", "1k")));
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_NATS_URL", "http://x")));
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_LIMIT_CPUS", "lots")));
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_DOCKER_CALL_TIMEOUT", "0")));
    assertThrows(IllegalArgumentException.class,
        () -> RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r", "SPB_DOCKER_CALL_TIMEOUT", "2x")));
    assertEquals(Duration.ofMinutes(2), RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r"))
        .dockerCallTimeout());
  }
}
