package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.DocumentedSettings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class RunnerConfigTest {

  /** Read by the launcher rather than by RunnerConfig. */
  private static final Set<String> READ_ELSEWHERE = Set.of("SPB_LOG_FORMAT");

  @Test
  void everySettingIsDocumentedWithTheDefaultItHas() throws Exception {
    DocumentedSettings documented = DocumentedSettings.under("### The runner");
    Set<String> undocumented = new TreeSet<>(RunnerConfig.ENVIRONMENT.keySet());
    undocumented.removeAll(documented.variables());
    assertEquals(Set.of(), undocumented, "settings missing from docs/operations.md");
    Set<String> unknown = new TreeSet<>(documented.variables());
    unknown.removeAll(RunnerConfig.ENVIRONMENT.keySet());
    unknown.removeAll(READ_ELSEWHERE);
    assertEquals(Set.of(), unknown, "documented settings the runner does not read");
    RunnerConfig defaults = config(Map.of("SPB_RUNNER_ID", "r1"));
    int literals = 0;
    for (String variable : RunnerConfig.ENVIRONMENT.keySet()) {
      var literal = documented.literalDefault(variable);
      if (literal.isPresent()) {
        literals++;
        Map<String, String> env = Map.of("SPB_RUNNER_ID", "r1", variable, literal.get());
        if (variable.startsWith("SPB_MODEL_")) {
          // A model setting counts only with a provider: compare with the same provider and nothing
          // else set.
          assertEquals(
              config(openAi(Map.of())).model(),
              config(openAi(env)).model(),
              variable + "=" + literal.get() + " as documented is not the default");
        } else {
          assertEquals(
              defaults,
              config(env),
              variable + "=" + literal.get() + " as documented is not the default");
        }
      }
    }
    assertTrue(literals >= 15, "only " + literals + " documented defaults were literals");
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    RunnerConfig config = config(Map.of("SPB_RUNNER_ID", "r1"));
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
    assertEquals(1L << 30, config.cacheEntryBytes(), "half of SPB_CACHE_SIZE");
    assertEquals(ImageCatalogue.parse("", "spbgit/agent:latest"), config.images());
    assertEquals(
        config,
        RunnerConfig.builder().runnerId("r1").build(),
        "the builder starts from the defaults");
  }

  @Test
  void parsesTheHealthAddressOnce() {
    assertNull(config(Map.of("SPB_RUNNER_ID", "r1")).health());
    assertNull(config(Map.of("SPB_RUNNER_ID", "r1", "SPB_RUNNER_HEALTH", "")).health());
    RunnerConfig.HostPort health =
        config(Map.of("SPB_RUNNER_ID", "r1", "SPB_RUNNER_HEALTH", "127.0.0.1:8081")).health();
    assertEquals("127.0.0.1", health.host());
    assertEquals(8081, health.port());
    for (String nonsense : List.of("8081", "127.0.0.1:", "127.0.0.1:99999", "a b:1", "::1:8081")) {
      assertThrows(
          IllegalArgumentException.class,
          () -> config(Map.of("SPB_RUNNER_ID", "r1", "SPB_RUNNER_HEALTH", nonsense)),
          nonsense);
    }
  }

  private static RunnerConfig config(Map<String, String> env) {
    return RunnerConfig.from(RunnerConfig.fromEnvironment(env));
  }

  private static Map<String, String> openAi(Map<String, String> env) {
    Map<String, String> all = new java.util.HashMap<>(env);
    all.putIfAbsent("SPB_RUNNER_ID", "r1");
    all.put("SPB_MODEL_PROVIDER", "openai");
    all.put("SPB_MODEL_URL", "https://api.example.org/v1");
    all.put("SPB_MODEL_API_KEY", "sk-test");
    all.put("SPB_MODEL", "gpt-test");
    return all;
  }

  @Test
  void refusesRootAndUidsPastTwoToTheThirtyFirstAsTheSandboxUid() {
    for (String uid : List.of("0", "-5", "2147483648", "1000:1000", "")) {
      assertThrows(
          IllegalArgumentException.class,
          () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_SANDBOX_UID", uid)),
          uid);
    }
    assertEquals(
        70_000, config(Map.of("SPB_RUNNER_ID", "r", "SPB_SANDBOX_UID", "70000")).sandboxUid());
  }

  @Test
  void knowsWhenItSharesTheGatewaysNode() {
    assertTrue(config("nats://127.0.0.1:4222").natsOnThisMachine());
    assertTrue(config("nats://localhost:4222,nats://127.0.0.2:4223").natsOnThisMachine());
    assertTrue(config("tls://[::1]:4222").natsOnThisMachine());
    assertFalse(config("tls://gateway.example.org:4222").natsOnThisMachine());
    assertFalse(
        config("nats://127.0.0.1:4222,nats://10.0.0.7:4222").natsOnThisMachine(),
        "one server elsewhere: the runner is another node's");
    assertFalse(config("nats://127.0.0.1.example.org:4222").natsOnThisMachine());
  }

  private static RunnerConfig config(String natsUrl) {
    return config(Map.of("SPB_RUNNER_ID", "r1", "SPB_NATS_URL", natsUrl));
  }

  @Test
  void readsLimitsAndAllowList() {
    RunnerConfig config =
        config(
            Map.of(
                "SPB_RUNNER_ID",
                "r1",
                "SPB_LIMIT_MEMORY",
                "512m",
                "SPB_LIMIT_WALL",
                "90s",
                "SPB_EGRESS_ALLOW",
                "api.example.org:443, models.internal:8000"));
    assertEquals(512L << 20, config.memoryBytes());
    assertEquals(Duration.ofSeconds(90), config.wallLimit());
    assertEquals(List.of("api.example.org:443", "models.internal:8000"), config.egressAllow());
  }

  @Test
  void aCacheEntryMayTakeHalfTheCacheUnlessSetAndNeverMoreThanAll() {
    assertEquals(
        32L << 20,
        config(Map.of("SPB_RUNNER_ID", "r", "SPB_CACHE_SIZE", "64m")).cacheEntryBytes(),
        "half of SPB_CACHE_SIZE");
    assertEquals(
        64L << 20,
        config(Map.of("SPB_RUNNER_ID", "r", "SPB_CACHE_SIZE", "64m", "SPB_CACHE_ENTRY_SIZE", "64m"))
            .cacheEntryBytes());
    assertEquals(0, config(Map.of("SPB_RUNNER_ID", "r", "SPB_CACHE_SIZE", "0")).cacheEntryBytes());
    IllegalArgumentException tooLarge =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                config(
                    Map.of(
                        "SPB_RUNNER_ID",
                        "r",
                        "SPB_CACHE_SIZE",
                        "64m",
                        "SPB_CACHE_ENTRY_SIZE",
                        "65m")));
    assertTrue(tooLarge.getMessage().contains("SPB_CACHE_ENTRY_SIZE"), tooLarge.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_CACHE_ENTRY_SIZE", "-1")));
  }

  @Test
  void failsFastOnNonsense() {
    assertThrows(IllegalArgumentException.class, () -> config(Map.of("SPB_RUNNER_ID", "bad id")));
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_RUNNER_SLOTS", "0")));
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_LIMIT_MEMORY", "1k")));
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_NATS_URL", "http://x")));
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_LIMIT_CPUS", "lots")));
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_DOCKER_CALL_TIMEOUT", "0")));
    assertThrows(
        IllegalArgumentException.class,
        () -> config(Map.of("SPB_RUNNER_ID", "r", "SPB_DOCKER_CALL_TIMEOUT", "2x")));
    assertEquals(Duration.ofMinutes(2), config(Map.of("SPB_RUNNER_ID", "r")).dockerCallTimeout());
  }
}
