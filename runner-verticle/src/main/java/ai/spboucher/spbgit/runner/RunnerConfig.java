package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.ConfigUnits;
import ai.spboucher.spbgit.common.PemTrust;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.model.ModelConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLSocketFactory;

/**
 * The runner's configuration, validated once at start-up. Limits here are the runner's maxima and defaults; a
 * job may ask for less, never for more.
 *
 * @param model the model provider for llm jobs, or null: the runner then refuses llm jobs
 * @param breachGrace how long an llm job's agent has, after the runner's breach notice, to push its partial work
 * @param gatewayCa a PEM file of the CA that signed an {@code https} gateway's certificate
 *     ({@code SPB_GATEWAY_CA}); null to trust the JDK's default CAs
 * @param dockerCallTimeout how long a short Docker call (create, kill, remove, ping, ...) may take before the
 *     runner takes the engine for frozen ({@code SPB_DOCKER_CALL_TIMEOUT})
 * @param sandboxUid the uid and gid job containers run as ({@code SPB_SANDBOX_UID}); the agent image must be
 *     built with the same one. Without a user namespace it is that uid on the host too, so it must be no login
 *     account's: {@link SandboxUidCheck} refuses one at start-up
 */
public record RunnerConfig(String natsUrl, String runnerId, int slots, String agentImage, double cpus,
                           long memoryBytes, long diskBytes, Duration wallLimit, long pidsLimit,
                           List<String> egressAllow, String dockerHost, Path workRoot, long logCapBytes,
                           ModelConfig model, Duration breachGrace, String healthAddress,
                           Path gatewayCa, Duration dockerCallTimeout, int sandboxUid) {

  /**
   * Above the login range (to 60000), Debian's reserved 60000-65535, the /etc/subuid ranges useradd hands out
   * (100000-600165535), systemd-nspawn's container range (to 1879048191) and below 2^31, which some tools take
   * for negative. Keep in step with docker/agent/build.sh.
   */
  public static final int DEFAULT_SANDBOX_UID = 2_000_000_000;

  public RunnerConfig {
    if (!healthAddress.isEmpty() && !healthAddress.matches("[^:\\s]+:\\d{1,5}")) {
      throw new IllegalArgumentException("SPB_RUNNER_HEALTH must be host:port (e.g. 127.0.0.1:8081), got "
          + healthAddress);
    }
    if (!natsUrl.matches("(nats|tls)://.+")) {
      throw new IllegalArgumentException("SPB_NATS_URL must be a nats:// or tls:// URL, got " + natsUrl);
    }
    if (!runnerId.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,62}")) {
      throw new IllegalArgumentException("SPB_RUNNER_ID must be 1-63 of A-Z a-z 0-9 . _ -, got " + runnerId);
    }
    if (slots < 1 || slots > 64) {
      throw new IllegalArgumentException("SPB_RUNNER_SLOTS must be between 1 and 64");
    }
    if (cpus <= 0 || memoryBytes < (16 << 20) || diskBytes < (1 << 20) || wallLimit.isNegative()
        || wallLimit.isZero() || pidsLimit < 16) {
      throw new IllegalArgumentException("limits must be positive (memory at least 16m, disk at least 1m, "
          + "pids at least 16)");
    }
    if (logCapBytes < (64 << 10)) {
      throw new IllegalArgumentException("SPB_LOG_CAP must be at least 64k");
    }
    if (dockerCallTimeout.isNegative() || dockerCallTimeout.isZero()) {
      throw new IllegalArgumentException("SPB_DOCKER_CALL_TIMEOUT must be positive");
    }
    if (sandboxUid <= 0) {
      // A uid past 2^31 - 1 already failed to parse.
      throw new IllegalArgumentException("SPB_SANDBOX_UID must be a uid from 1 to 2147483647 (never root), got "
          + sandboxUid);
    }
    if (breachGrace.isNegative()) {
      throw new IllegalArgumentException("SPB_BREACH_GRACE cannot be negative");
    }
    egressAllow = List.copyOf(egressAllow);
    // Fail at start-up, not in every job, on a malformed entry.
    ai.spboucher.spbgit.runner.egress.EgressPolicy.of(egressAllow);
  }

  /** Reads {@code SPB_*} variables; unset ones take the documented defaults. */
  public static RunnerConfig fromEnvironment(Map<String, String> env) {
    try {
      return new RunnerConfig(
          env.getOrDefault("SPB_NATS_URL", "nats://127.0.0.1:4222"),
          env.getOrDefault("SPB_RUNNER_ID", hostName()),
          Integer.parseInt(env.getOrDefault("SPB_RUNNER_SLOTS", "1")),
          env.getOrDefault("SPB_AGENT_IMAGE", "spbgit/agent:latest"),
          Double.parseDouble(env.getOrDefault("SPB_LIMIT_CPUS", "2")),
          ConfigUnits.parseBytes(env.getOrDefault("SPB_LIMIT_MEMORY", "4g")),
          ConfigUnits.parseBytes(env.getOrDefault("SPB_LIMIT_DISK", "2g")),
          ConfigUnits.parseDuration(env.getOrDefault("SPB_LIMIT_WALL", "30m")),
          Long.parseLong(env.getOrDefault("SPB_LIMIT_PIDS", "512")),
          Arrays.stream(env.getOrDefault("SPB_EGRESS_ALLOW", "").split("[,\\s]+")).filter(s -> !s.isBlank())
              .toList(),
          env.getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock"),
          Path.of(env.getOrDefault("SPB_RUNNER_WORK_DIR", "/var/lib/spbgit-runner")),
          ConfigUnits.parseBytes(env.getOrDefault("SPB_LOG_CAP", "256m")),
          ModelConfig.fromEnvironment(env),
          ConfigUnits.parseDuration(env.getOrDefault("SPB_BREACH_GRACE", "30s")),
          env.getOrDefault("SPB_RUNNER_HEALTH", ""),
          env.getOrDefault("SPB_GATEWAY_CA", "").isBlank() ? null : Path.of(env.get("SPB_GATEWAY_CA")),
          ConfigUnits.parseDuration(env.getOrDefault("SPB_DOCKER_CALL_TIMEOUT",
              DockerSandbox.DEFAULT_CALL_TIMEOUT.toSeconds() + "s")),
          Integer.parseInt(env.getOrDefault("SPB_SANDBOX_UID", Integer.toString(DEFAULT_SANDBOX_UID)).strip()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("invalid number in runner configuration: " + e.getMessage(), e);
    }
  }

  /**
   * Whether every NATS server this runner is given is on its own machine (a loopback address). NATS lives on
   * the gateway's node, so such a runner shares that node: fine for trying the product out, not for
   * production, where a job container that escaped would sit next to the forge's data.
   */
  public boolean natsOnThisMachine() {
    return Arrays.stream(natsUrl.split(",")).map(String::strip).filter(s -> !s.isEmpty())
        .allMatch(url -> isLoopbackHost(url.contains("://") ? url : "nats://" + url));
  }

  private static boolean isLoopbackHost(String url) {
    String host;
    try {
      host = java.net.URI.create(url).getHost();
    } catch (IllegalArgumentException e) {
      return false;
    }
    if (host == null) {
      return false;
    }
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    return "localhost".equalsIgnoreCase(bare) || bare.matches("127(\\.\\d{1,3}){3}") || "::1".equals(bare)
        || "0:0:0:0:0:0:0:1".equals(bare);
  }

  /** How job git relays reach an {@code https} gateway. Reads {@link #gatewayCa}: blocking. */
  public SSLSocketFactory gatewayTls() throws IOException, GeneralSecurityException {
    return gatewayCa == null ? (SSLSocketFactory) SSLSocketFactory.getDefault()
        : PemTrust.sslContext(gatewayCa).getSocketFactory();
  }

  private static String hostName() {
    try {
      String name = InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
      return name.isEmpty() ? "runner" : name;
    } catch (UnknownHostException e) {
      return "runner";
    }
  }
}
