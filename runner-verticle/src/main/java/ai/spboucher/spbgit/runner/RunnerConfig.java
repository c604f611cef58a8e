package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.ConfigUnits;
import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.common.PemTrust;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.egress.EgressPolicy;
import ai.spboucher.spbgit.runner.model.ModelConfig;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
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
      Map.ofEntries(
          Map.entry("SPB_NATS_URL", "natsUrl"),
          Map.entry("SPB_NATS_CREDS", "natsCreds"),
          Map.entry("SPB_NATS_USER", "natsUser"),
          Map.entry("SPB_NATS_PASSWORD", "natsPassword"),
          Map.entry("SPB_NATS_PASSWORD_FILE", "natsPasswordFile"),
          Map.entry("SPB_NATS_CA", "natsCa"),
          Map.entry("SPB_JOB_ACK_WAIT", "jobAckWait"),
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

  private static final List<String> MODEL_VARIABLES =
      List.of(
          "SPB_MODEL_PROVIDER",
          "SPB_MODEL_URL",
          "SPB_MODEL_API_KEY",
          "SPB_MODEL_API_KEY_FILE",
          "SPB_MODEL",
          "SPB_MODELS",
          "SPB_MODEL_TOKEN_BUDGET",
          "SPB_MODEL_TIMEOUT",
          "SPB_MODEL_CONCURRENCY");

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
    if (dockerCallTimeout.isNegative() || dockerCallTimeout.isZero()) {
      throw new IllegalArgumentException("SPB_DOCKER_CALL_TIMEOUT must be positive");
    }
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
    JsonObject json = new JsonObject();
    ENVIRONMENT.forEach(
        (variable, key) -> {
          if (env.containsKey(variable)) {
            json.put(key, env.get(variable));
          }
        });
    return json;
  }

  /** Reads the JSON form; unset keys take the documented defaults (those of {@link Builder}). */
  public static RunnerConfig from(JsonObject json) {
    Builder b = builder();
    try {
      b.nats(NatsSettings.fromEnvironment(variables(json, NatsSettings.VARIABLES)));
      b.model(ModelConfig.fromEnvironment(variables(json, MODEL_VARIABLES)));
      read(json, "runnerId", b::runnerId);
      read(json, "slots", v -> b.slots(Integer.parseInt(v)));
      read(json, "agentImage", b::agentImage);
      read(json, "cpus", v -> b.cpus(Double.parseDouble(v)));
      read(json, "memory", v -> b.memoryBytes(ConfigUnits.parseBytes(v)));
      read(json, "disk", v -> b.diskBytes(ConfigUnits.parseBytes(v)));
      read(json, "wallLimit", v -> b.wallLimit(ConfigUnits.parseDuration(v)));
      read(json, "pidsLimit", v -> b.pidsLimit(Long.parseLong(v)));
      read(
          json,
          "egressAllow",
          v -> b.egressAllow(Arrays.stream(v.split("[,\\s]+")).filter(s -> !s.isBlank()).toList()));
      read(json, "dockerHost", b::dockerHost);
      read(json, "workRoot", v -> b.workRoot(Path.of(v)));
      read(json, "logCap", v -> b.logCapBytes(ConfigUnits.parseBytes(v)));
      read(json, "breachGrace", v -> b.breachGrace(ConfigUnits.parseDuration(v)));
      read(
          json,
          "health",
          v -> b.health(v.isEmpty() ? null : HostPort.parse("SPB_RUNNER_HEALTH", v)));
      read(json, "gatewayCa", v -> b.gatewayCa(v.isBlank() ? null : Path.of(v)));
      read(json, "dockerCallTimeout", v -> b.dockerCallTimeout(ConfigUnits.parseDuration(v)));
      read(json, "sandboxUid", v -> b.sandboxUid(Integer.parseInt(v.strip())));
      read(json, "images", b::images);
      read(json, "cacheSize", v -> b.cacheBytes(ConfigUnits.parseBytes(v)));
      read(json, "cacheEntrySize", v -> b.cacheEntryBytes(ConfigUnits.parseBytes(v)));
      read(json, "gatewayKeys", v -> b.gatewayKeys(v.isBlank() ? null : Path.of(v)));
      read(json, "runnerKey", v -> b.runnerKey(v.isBlank() ? null : Path.of(v)));
      return b.build();
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "invalid number in runner configuration: " + e.getMessage(), e);
    }
  }

  private static void read(JsonObject json, String key, Consumer<String> setter) {
    String value = json.getString(key);
    if (value != null) {
      setter.accept(value);
    }
  }

  /**
   * The {@code variables} set in {@code json}, by their environment names, for readers shared with
   * others.
   */
  private static Map<String, String> variables(JsonObject json, List<String> variables) {
    Map<String, String> set = new HashMap<>();
    for (String variable : variables) {
      String value = json.getString(ENVIRONMENT.get(variable));
      if (value != null) {
        set.put(variable, value);
      }
    }
    return set;
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
    return Arrays.stream(nats.url().split(","))
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .allMatch(url -> isLoopbackHost(url.contains("://") ? url : "nats://" + url));
  }

  private static boolean isLoopbackHost(String url) {
    String host;
    try {
      host = URI.create(url).getHost();
    } catch (IllegalArgumentException e) {
      return false;
    }
    if (host == null) {
      return false;
    }
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    return "localhost".equalsIgnoreCase(bare)
        || bare.matches("127(\\.\\d{1,3}){3}")
        || "::1".equals(bare)
        || "0:0:0:0:0:0:0:1".equals(bare);
  }

  /** How job git relays reach an {@code https} gateway. Reads {@link #gatewayCa}: blocking. */
  public SSLSocketFactory gatewayTls() throws IOException, GeneralSecurityException {
    return gatewayCa == null
        ? (SSLSocketFactory) SSLSocketFactory.getDefault()
        : PemTrust.sslContext(gatewayCa).getSocketFactory();
  }

  /** A builder with every setting at its documented default. */
  public static Builder builder() {
    return new Builder();
  }

  /** Names each setting of a {@link RunnerConfig}, as nats.java's {@code Options.Builder} does. */
  public static final class Builder {
    private NatsSettings nats = NatsSettings.fromEnvironment(Map.of());
    private String runnerId = hostName();
    private int slots = 1;
    private String agentImage = "spbgit/agent:latest";
    private double cpus = 2;
    private long memoryBytes = 4L << 30;
    private long diskBytes = 2L << 30;
    private Duration wallLimit = Duration.ofMinutes(30);
    private long pidsLimit = 512;
    private List<String> egressAllow = List.of();
    private String dockerHost = "unix:///var/run/docker.sock";
    private Path workRoot = Path.of("/var/lib/spbgit-runner");
    private long logCapBytes = 256L << 20;
    private ModelConfig model;
    private Duration breachGrace = Duration.ofSeconds(30);
    private HostPort health;
    private Path gatewayCa;
    private Duration dockerCallTimeout = DockerSandbox.DEFAULT_CALL_TIMEOUT;
    private int sandboxUid = DEFAULT_SANDBOX_UID;

    /** {@code SPB_IMAGES} as written; blank for the catalogue built on {@link #agentImage}. */
    private String images = "";

    private long cacheBytes = 2L << 30;
    private Path gatewayKeys;
    private Path runnerKey;

    /** Null for half of {@link #cacheBytes}. */
    private Long cacheEntryBytes;

    private Builder() {}

    public Builder nats(NatsSettings nats) {
      this.nats = nats;
      return this;
    }

    public Builder runnerId(String runnerId) {
      this.runnerId = runnerId;
      return this;
    }

    public Builder slots(int slots) {
      this.slots = slots;
      return this;
    }

    public Builder agentImage(String agentImage) {
      this.agentImage = agentImage;
      return this;
    }

    public Builder cpus(double cpus) {
      this.cpus = cpus;
      return this;
    }

    public Builder memoryBytes(long memoryBytes) {
      this.memoryBytes = memoryBytes;
      return this;
    }

    public Builder diskBytes(long diskBytes) {
      this.diskBytes = diskBytes;
      return this;
    }

    public Builder wallLimit(Duration wallLimit) {
      this.wallLimit = wallLimit;
      return this;
    }

    public Builder pidsLimit(long pidsLimit) {
      this.pidsLimit = pidsLimit;
      return this;
    }

    public Builder egressAllow(List<String> egressAllow) {
      this.egressAllow = egressAllow;
      return this;
    }

    public Builder dockerHost(String dockerHost) {
      this.dockerHost = dockerHost;
      return this;
    }

    public Builder workRoot(Path workRoot) {
      this.workRoot = workRoot;
      return this;
    }

    public Builder logCapBytes(long logCapBytes) {
      this.logCapBytes = logCapBytes;
      return this;
    }

    public Builder model(ModelConfig model) {
      this.model = model;
      return this;
    }

    public Builder breachGrace(Duration breachGrace) {
      this.breachGrace = breachGrace;
      return this;
    }

    public Builder health(HostPort health) {
      this.health = health;
      return this;
    }

    public Builder gatewayCa(Path gatewayCa) {
      this.gatewayCa = gatewayCa;
      return this;
    }

    public Builder dockerCallTimeout(Duration timeout) {
      this.dockerCallTimeout = timeout;
      return this;
    }

    public Builder sandboxUid(int sandboxUid) {
      this.sandboxUid = sandboxUid;
      return this;
    }

    /** {@code SPB_IMAGES}: {@code name=image,...}; blank for the default catalogue. */
    public Builder images(String images) {
      this.images = images;
      return this;
    }

    public Builder cacheBytes(long cacheBytes) {
      this.cacheBytes = cacheBytes;
      return this;
    }

    /** {@code SPB_CACHE_ENTRY_SIZE}; unset, half of {@link #cacheBytes}. */
    public Builder cacheEntryBytes(long cacheEntryBytes) {
      this.cacheEntryBytes = cacheEntryBytes;
      return this;
    }

    /** {@code SPB_GATEWAY_KEYS}: a PEM file or a directory of the gateway's job-bus keys. */
    public Builder gatewayKeys(Path gatewayKeys) {
      this.gatewayKeys = gatewayKeys;
      return this;
    }

    /** {@code SPB_RUNNER_KEY}; null for {@code <workRoot>/runner-key.pem}. */
    public Builder runnerKey(Path runnerKey) {
      this.runnerKey = runnerKey;
      return this;
    }

    /** Validates; fails with a message naming the variable at fault. */
    public RunnerConfig build() {
      return new RunnerConfig(
          nats,
          runnerId,
          slots,
          agentImage,
          cpus,
          memoryBytes,
          diskBytes,
          wallLimit,
          pidsLimit,
          egressAllow,
          dockerHost,
          workRoot,
          logCapBytes,
          model,
          breachGrace,
          health,
          gatewayCa,
          dockerCallTimeout,
          sandboxUid,
          ImageCatalogue.parse(images, agentImage),
          cacheBytes,
          cacheEntryBytes == null ? cacheBytes / 2 : cacheEntryBytes,
          gatewayKeys,
          runnerKey);
    }
  }

  /**
   * A listening address, {@code host:port}.
   *
   * @param host a name or an IPv4 address (no brackets)
   * @param port 0 to 65535; 0 picks a free port
   */
  public record HostPort(String host, int port) {
    /** Parses {@code host:port}; the message names {@code variable}. */
    static HostPort parse(String variable, String value) {
      Matcher m = Pattern.compile("([^:\\s]+):(\\d{1,5})").matcher(value);
      if (!m.matches() || Integer.parseInt(m.group(2)) > 65535) {
        throw new IllegalArgumentException(
            variable + " must be host:port (e.g. 127.0.0.1:8081), got " + value);
      }
      return new HostPort(m.group(1), Integer.parseInt(m.group(2)));
    }

    @Override
    public String toString() {
      return host + ":" + port;
    }
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
