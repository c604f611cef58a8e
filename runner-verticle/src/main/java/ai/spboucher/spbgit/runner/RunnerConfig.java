package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.common.PemTrust;
import ai.spboucher.spbgit.common.Settings;
import ai.spboucher.spbgit.runner.egress.EgressPolicy;
import ai.spboucher.spbgit.runner.model.ModelConfig;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLSocketFactory;

/**
 * The runner's configuration, validated once at start-up. Limits here are the runner's maxima and
 * defaults; a job may ask for less, never for more. {@code Main} reads it as the gateway does its
 * own: environment ({@link #fromEnvironment}), JSON, {@link #from}; code and tests name each
 * setting with {@link #builder()}.
 *
 * @param nats the NATS servers and how to authenticate to them ({@code SPB_NATS_*})
 * @param model the model provider for llm jobs, or null: the runner then refuses llm jobs
 * @param breachGrace how long an llm job's agent has, after the runner's breach notice, to push its
 *     partial work
 * @param health where {@code GET /healthz} listens ({@code SPB_RUNNER_HEALTH}), or null for nowhere
 * @param gatewayCa a PEM file of the CA that signed an {@code https} gateway's certificate ({@code
 *     SPB_GATEWAY_CA}); null to trust the JDK's default CAs
 * @param dockerCallTimeout how long a short Docker call (create, kill, remove, ping, ...) may take
 *     before the runner takes the engine for frozen ({@code SPB_DOCKER_CALL_TIMEOUT})
 * @param sandboxUid the uid and gid job containers run as ({@code SPB_SANDBOX_UID}); the agent
 *     image must be built with the same one. Without a user namespace it is that uid on the host
 *     too, so it must be no login account's: {@link SandboxUidCheck} refuses one at start-up
 * @param images the images this runner may offer by name ({@code SPB_IMAGES}, {@link
 *     ImageCatalogue})
 * @param cacheBytes the most the runner keeps of setup caches, all repositories together ({@code
 *     SPB_CACHE_SIZE}); 0 keeps none
 * @param cacheEntryBytes the most one setup cache may take ({@code SPB_CACHE_ENTRY_SIZE}, default
 *     half of {@code SPB_CACHE_SIZE}), counted before it is written; at most {@code cacheBytes}
 * @param gatewayKeys the gateway's job-bus public keys ({@code SPB_GATEWAY_KEYS}): a PEM file or a
 *     directory of {@code *.pub.pem}; null here, the runner refuses to start ({@link
 *     ai.spboucher.spbgit.runner.trust.GatewayKeys})
 * @param runnerKey this runner's private key, which job tokens are sealed to ({@code
 *     SPB_RUNNER_KEY}; {@code <workRoot>/runner-key.pem} by default), created on first start
 */
public record RunnerConfig(
    NatsSettings nats,
    String runnerId,
    int slots,
    String agentImage,
    double cpus,
    long memoryBytes,
    long diskBytes,
    Duration wallLimit,
    long pidsLimit,
    List<String> egressAllow,
    String dockerHost,
    Path workRoot,
    long logCapBytes,
    ModelConfig model,
    Duration breachGrace,
    HostPort health,
    Path gatewayCa,
    Duration dockerCallTimeout,
    int sandboxUid,
    ImageCatalogue images,
    long cacheBytes,
    long cacheEntryBytes,
    Path gatewayKeys,
    Path runnerKey) {

  /**
   * Above the login range (to 60000), Debian's reserved 60000-65535, the /etc/subuid ranges useradd
   * hands out (100000-600165535), systemd-nspawn's container range (to 1879048191) and below 2^31,
   * which some tools take for negative. Keep in step with docker/job-image/build.sh.
   */
  public static final int DEFAULT_SANDBOX_UID = 2_000_000_000;

  /**
   * Environment variables and their JSON keys; docs/operations.md documents each (RunnerConfigTest
   * checks).
   */
  static final Map<String, String> ENVIRONMENT =
      NatsSettings.withJsonKeys(
          Map.entry("SPB_RUNNER_ID", "runnerId"),
          Map.entry("SPB_RUNNER_SLOTS", "slots"),
          Map.entry("SPB_AGENT_IMAGE", "agentImage"),
          Map.entry("SPB_LIMIT_CPUS", "cpus"),
          Map.entry("SPB_LIMIT_MEMORY", "memory"),
          Map.entry("SPB_LIMIT_DISK", "disk"),
          Map.entry("SPB_LIMIT_WALL", "wallLimit"),
          Map.entry("SPB_LIMIT_PIDS", "pidsLimit"),
          Map.entry("SPB_EGRESS_ALLOW", "egressAllow"),
          Map.entry("DOCKER_HOST", "dockerHost"),
          Map.entry("SPB_RUNNER_WORK_DIR", "workRoot"),
          Map.entry("SPB_LOG_CAP", "logCap"),
          Map.entry("SPB_MODEL_PROVIDER", "modelProvider"),
          Map.entry("SPB_MODEL_URL", "modelUrl"),
          Map.entry("SPB_MODEL_API_KEY", "modelApiKey"),
          Map.entry("SPB_MODEL_API_KEY_FILE", "modelApiKeyFile"),
          Map.entry("SPB_MODEL", "model"),
          Map.entry("SPB_MODELS", "models"),
          Map.entry("SPB_MODEL_TOKEN_BUDGET", "modelTokenBudget"),
          Map.entry("SPB_MODEL_TIMEOUT", "modelTimeout"),
          Map.entry("SPB_MODEL_CONCURRENCY", "modelConcurrency"),
          Map.entry("SPB_BREACH_GRACE", "breachGrace"),
          Map.entry("SPB_RUNNER_HEALTH", "health"),
          Map.entry("SPB_GATEWAY_CA", "gatewayCa"),
          Map.entry("SPB_DOCKER_CALL_TIMEOUT", "dockerCallTimeout"),
          Map.entry("SPB_SANDBOX_UID", "sandboxUid"),
          Map.entry("SPB_IMAGES", "images"),
          Map.entry("SPB_CACHE_SIZE", "cacheSize"),
          Map.entry("SPB_CACHE_ENTRY_SIZE", "cacheEntrySize"),
          Map.entry("SPB_GATEWAY_KEYS", "gatewayKeys"),
          Map.entry("SPB_RUNNER_KEY", "runnerKey"));

  public RunnerConfig {
    Objects.requireNonNull(nats, "nats");
    if (!runnerId.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,62}")) {
      throw new IllegalArgumentException(
          "SPB_RUNNER_ID must be 1-63 of A-Z a-z 0-9 . _ -, got " + runnerId);
    }
    if (slots < 1 || slots > 64) {
      throw new IllegalArgumentException("SPB_RUNNER_SLOTS must be between 1 and 64");
    }
    if (cpus <= 0
        || memoryBytes < (16 << 20)
        || diskBytes < (1 << 20)
        || wallLimit.isNegative()
        || wallLimit.isZero()
        || pidsLimit < 16) {
      throw new IllegalArgumentException(
          "limits must be positive (memory at least 16m, disk at least 1m, " + "pids at least 16)");
    }
    if (logCapBytes < (64 << 10)) {
      throw new IllegalArgumentException("SPB_LOG_CAP must be at least 64k");
    }
    Settings.positive("SPB_DOCKER_CALL_TIMEOUT", dockerCallTimeout);
    if (sandboxUid <= 0) {
      // A uid past 2^31 - 1 already failed to parse.
      throw new IllegalArgumentException(
          "SPB_SANDBOX_UID must be a uid from 1 to 2147483647 (never root), got " + sandboxUid);
    }
    if (breachGrace.isNegative()) {
      throw new IllegalArgumentException("SPB_BREACH_GRACE cannot be negative");
    }
    Objects.requireNonNull(images, "images");
    if (cacheBytes < 0) {
      throw new IllegalArgumentException("SPB_CACHE_SIZE cannot be negative");
    }
    if (cacheEntryBytes < 0 || cacheEntryBytes > cacheBytes) {
      throw new IllegalArgumentException(
          "SPB_CACHE_ENTRY_SIZE must be between 0 and SPB_CACHE_SIZE ("
              + cacheBytes
              + " bytes), got "
              + cacheEntryBytes);
    }
    if (runnerKey == null) {
      runnerKey = workRoot.resolve("runner-key.pem");
    }
    egressAllow = List.copyOf(egressAllow);
    // Fail at start-up, not in every job, on a malformed entry.
    EgressPolicy.of(egressAllow);
  }

  /**
   * Builds the JSON form from environment variables. Unlike the gateway's, a variable set to the
   * empty string is kept (and then refused where empty means nothing), as the runner always has.
   */
  public static JsonObject fromEnvironment(Map<String, String> env) {
    return new JsonObject(Settings.byKey(env, ENVIRONMENT, true));
  }

  /**
   * Reads the JSON form; unset keys take the documented defaults (those of {@link
   * RunnerConfigBuilder}).
   */
  public static RunnerConfig from(JsonObject json) {
    Settings s = Settings.keepingEmpty(Settings.byVariable(json.getMap(), ENVIRONMENT));
    RunnerConfigBuilder d = builder();
    long cacheBytes = s.size("SPB_CACHE_SIZE", d.cacheBytes);
    return d.nats(NatsSettings.fromEnvironment(s.subset(NatsSettings.VARIABLES)))
        .model(ModelConfig.fromEnvironment(s.subset(ModelConfig.VARIABLES)))
        .runnerId(s.text("SPB_RUNNER_ID", d.runnerId))
        .slots(s.integer("SPB_RUNNER_SLOTS", d.slots))
        .agentImage(s.text("SPB_AGENT_IMAGE", d.agentImage))
        .cpus(s.decimal("SPB_LIMIT_CPUS", d.cpus))
        .memoryBytes(s.size("SPB_LIMIT_MEMORY", d.memoryBytes))
        .diskBytes(s.size("SPB_LIMIT_DISK", d.diskBytes))
        .wallLimit(s.duration("SPB_LIMIT_WALL", d.wallLimit))
        .pidsLimit(s.wholeNumber("SPB_LIMIT_PIDS", d.pidsLimit))
        .egressAllow(s.list("SPB_EGRESS_ALLOW"))
        .dockerHost(s.text("DOCKER_HOST", d.dockerHost))
        .workRoot(s.parsed("SPB_RUNNER_WORK_DIR", d.workRoot, Path::of))
        .logCapBytes(s.size("SPB_LOG_CAP", d.logCapBytes))
        .breachGrace(s.duration("SPB_BREACH_GRACE", d.breachGrace))
        .health(s.nonBlank("SPB_RUNNER_HEALTH").map(HostPort::parse).orElse(null))
        .gatewayCa(s.path("SPB_GATEWAY_CA", null))
        .dockerCallTimeout(s.duration("SPB_DOCKER_CALL_TIMEOUT", d.dockerCallTimeout))
        .sandboxUid(s.integer("SPB_SANDBOX_UID", d.sandboxUid))
        .images(s.text("SPB_IMAGES", d.images))
        .cacheBytes(cacheBytes)
        .cacheEntryBytes(s.size("SPB_CACHE_ENTRY_SIZE", cacheBytes / 2))
        .gatewayKeys(s.path("SPB_GATEWAY_KEYS", null))
        .runnerKey(s.path("SPB_RUNNER_KEY", null))
        .build();
  }

  /** The NATS server URL or URLs. */
  public String natsUrl() {
    return nats.url();
  }

  /**
   * Whether every NATS server this runner is given is on its own machine (a loopback address). NATS
   * lives on the gateway's node, so such a runner shares that node: fine for trying the product
   * out, not for production, where a job container that escaped would sit next to the forge's data.
   */
  public boolean natsOnThisMachine() {
    return nats.onThisMachine();
  }

  /** How job git relays reach an {@code https} gateway. Reads {@link #gatewayCa}: blocking. */
  public SSLSocketFactory gatewayTls() throws IOException, GeneralSecurityException {
    return gatewayCa == null
        ? (SSLSocketFactory) SSLSocketFactory.getDefault()
        : PemTrust.sslContext(gatewayCa).getSocketFactory();
  }

  /** A builder with every setting at its documented default. */
  public static RunnerConfigBuilder builder() {
    return new RunnerConfigBuilder();
  }

  /**
   * A listening address, {@code host:port}.
   *
   * @param host a name or an IPv4 address (no brackets)
   * @param port 0 to 65535; 0 picks a free port
   */
  public record HostPort(String host, int port) {
    /** Parses {@code SPB_RUNNER_HEALTH}, {@code host:port}. */
    static HostPort parse(String value) {
      Matcher m = Pattern.compile("([^:\\s]+):(\\d{1,5})").matcher(value);
      if (!m.matches() || Integer.parseInt(m.group(2)) > 65535) {
        throw new IllegalArgumentException(
            "SPB_RUNNER_HEALTH must be host:port (e.g. 127.0.0.1:8081), got " + value);
      }
      return new HostPort(m.group(1), Integer.parseInt(m.group(2)));
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
  }
}
