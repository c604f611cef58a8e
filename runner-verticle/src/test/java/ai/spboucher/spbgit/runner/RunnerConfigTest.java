package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
  }
}
