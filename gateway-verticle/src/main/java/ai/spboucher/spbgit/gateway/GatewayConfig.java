package ai.spboucher.spbgit.gateway;

import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.common.Settings;
import ai.spboucher.spbgit.gateway.http.ConnectionLimits;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The gateway's configuration, validated once at start-up.
 *
 * @param dataDir where repositories, tokens, keys and logs live
 * @param httpHost the address to bind
 * @param httpPort the port to bind; 0 picks a free one
 * @param publicUrl the URL clients use, or null to derive it from the bound address
 * @param maxPushBytes the largest receive-pack request body (and pack) accepted, after
 *     decompression
 * @param maxObjectBytes the largest single object accepted in a push
 * @param gitWorkers threads for JGit work, so long clones never starve other blocking work
 * @param nats the NATS server carrying the job queue and job events, and how to authenticate to it
 * @param jobWallLimit the wall-clock limit given to each job (its token lives a little longer, at
 *     most 2 h)
 * @param logRetention how long job logs stay in JetStream for replay
 * @param model the default model of llm-mode jobs; empty when no runner has a model provider, and
 *     then jobs without {@code exec} are refused at once
 * @param models the models a job may name (always includes {@code model})
 * @param natsReplicas the replica count of the job streams (3 on a three-node NATS cluster)
 * @param diffTimeBudget the wall-clock time one proposal diff may take before it is answered "too
 *     large"
 * @param connections the head and idle timeouts and the connection caps
 * @param maxPushInflatedBytes the bytes one push may inflate in all (objects, delta instructions
 *     and the objects deltas build): a small pack of deltas can expand to gigabytes
 * @param maxDeltaDepth the longest delta chain a push may store
 * @param pushTimeLimit the wall-clock time one push may take, upload included
 * @param runnerKeys the directory of the runners' public keys ({@code *.pub.pem}) job tokens are
 *     sealed to ({@code SPB_RUNNER_KEYS}; {@code <dataDir>/keys/runners} by default)
 */
public record GatewayConfig(
    Path dataDir,
    String httpHost,
    int httpPort,
    String publicUrl,
    long maxPushBytes,
    long maxObjectBytes,
    int gitWorkers,
    NatsSettings nats,
    Duration jobWallLimit,
    Duration logRetention,
    String model,
    List<String> models,
    int natsReplicas,
    Duration diffTimeBudget,
    ConnectionLimits connections,
    long maxPushInflatedBytes,
    int maxDeltaDepth,
    Duration pushTimeLimit,
    Path runnerKeys) {

  /**
   * Environment variables and their JSON keys; docs/operations.md documents each (GatewayConfigTest
   * checks).
   */
  static final Map<String, String> ENVIRONMENT =
      NatsSettings.withJsonKeys(
          Map.entry("SPB_DATA_DIR", "dataDir"),
          Map.entry("SPB_HTTP_HOST", "httpHost"),
          Map.entry("SPB_HTTP_PORT", "httpPort"),
          Map.entry("SPB_PUBLIC_URL", "publicUrl"),
          Map.entry("SPB_MAX_PUSH_BYTES", "maxPushBytes"),
          Map.entry("SPB_MAX_OBJECT_BYTES", "maxObjectBytes"),
          Map.entry("SPB_GIT_WORKERS", "gitWorkers"),
          Map.entry("SPB_JOB_WALL_LIMIT", "jobWallLimit"),
          Map.entry("SPB_LOG_RETENTION", "logRetention"),
          Map.entry("SPB_MODEL", "model"),
          Map.entry("SPB_MODELS", "models"),
          Map.entry("SPB_NATS_REPLICAS", "natsReplicas"),
          Map.entry("SPB_DIFF_TIME_BUDGET", "diffTimeBudget"),
          Map.entry("SPB_HEAD_TIMEOUT", "headTimeout"),
          Map.entry("SPB_IDLE_TIMEOUT", "idleTimeout"),
          Map.entry("SPB_MAX_CONNECTIONS", "maxConnections"),
          Map.entry("SPB_MAX_CONNECTIONS_PER_ADDRESS", "maxConnectionsPerAddress"),
          Map.entry("SPB_MAX_PUSH_INFLATED_BYTES", "maxPushInflatedBytes"),
          Map.entry("SPB_MAX_DELTA_DEPTH", "maxDeltaDepth"),
          Map.entry("SPB_PUSH_TIME_LIMIT", "pushTimeLimit"),
          Map.entry("SPB_RUNNER_KEYS", "runnerKeys"));

  public GatewayConfig {
    if (httpPort < 0 || httpPort > 65535) {
      throw new IllegalArgumentException(
          "SPB_HTTP_PORT must be between 0 and 65535, got " + httpPort);
    }
    if (maxPushBytes <= 0 || maxObjectBytes <= 0) {
      throw new IllegalArgumentException(
          "SPB_MAX_PUSH_BYTES and SPB_MAX_OBJECT_BYTES must be positive");
    }
    if (maxPushInflatedBytes <= 0 || maxDeltaDepth < 1 || pushTimeLimit.toSeconds() < 1) {
      throw new IllegalArgumentException(
          "SPB_MAX_PUSH_INFLATED_BYTES must be positive, SPB_MAX_DELTA_DEPTH at least 1"
              + " and SPB_PUSH_TIME_LIMIT at least 1s");
    }
    if (gitWorkers < 1) {
      throw new IllegalArgumentException("SPB_GIT_WORKERS must be at least 1");
    }
    if (publicUrl != null && !publicUrl.matches("https?://[^\\s/]+(/[^\\s]*)?")) {
      throw new IllegalArgumentException("SPB_PUBLIC_URL must be an http(s) URL, got " + publicUrl);
    }
    Objects.requireNonNull(nats, "nats");
    if (jobWallLimit.toSeconds() < 1 || jobWallLimit.compareTo(Duration.ofMinutes(100)) > 0) {
      throw new IllegalArgumentException(
          "SPB_JOB_WALL_LIMIT must be between 1s and 100m (job tokens live at most 2 h)");
    }
    if (natsReplicas < 1 || natsReplicas > 5) {
      throw new IllegalArgumentException("SPB_NATS_REPLICAS must be between 1 and 5");
    }
    if (diffTimeBudget.toSeconds() < 1 || diffTimeBudget.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException("SPB_DIFF_TIME_BUDGET must be between 1s and 10m");
    }
    if (logRetention.toMinutes() < 1) {
      throw new IllegalArgumentException("SPB_LOG_RETENTION must be at least 1m");
    }
    model = model == null ? "" : model.trim();
    List<String> allowed = new ArrayList<>(models == null ? List.of() : models);
    if (!model.isEmpty() && !allowed.contains(model)) {
      allowed.add(0, model);
    }
    if (model.isEmpty() && !allowed.isEmpty()) {
      throw new IllegalArgumentException("SPB_MODELS needs SPB_MODEL (the default model) too");
    }
    models = List.copyOf(allowed);
    Objects.requireNonNull(runnerKeys, "runnerKeys");
    if (publicUrl != null && publicUrl.endsWith("/")) {
      publicUrl = publicUrl.substring(0, publicUrl.length() - 1);
    }
  }

  /** Reads the JSON form; unset keys take the documented defaults. */
  public static GatewayConfig from(JsonObject json) {
    Settings s = Settings.of(Settings.byVariable(json.getMap(), ENVIRONMENT));
    Path dataDir = Path.of(s.text("SPB_DATA_DIR", "data")).normalize();
    return new GatewayConfig(
        dataDir,
        s.text("SPB_HTTP_HOST", "127.0.0.1"),
        s.integer("SPB_HTTP_PORT", 8080),
        s.text("SPB_PUBLIC_URL", null),
        s.size("SPB_MAX_PUSH_BYTES", 2L << 30),
        s.size("SPB_MAX_OBJECT_BYTES", 100L << 20),
        s.integer("SPB_GIT_WORKERS", 16),
        NatsSettings.fromEnvironment(s.subset(NatsSettings.VARIABLES)),
        s.duration("SPB_JOB_WALL_LIMIT", Duration.ofMinutes(30)),
        s.duration("SPB_LOG_RETENTION", Duration.ofDays(30)),
        s.text("SPB_MODEL", ""),
        s.list("SPB_MODELS"),
        s.integer("SPB_NATS_REPLICAS", 1),
        s.duration("SPB_DIFF_TIME_BUDGET", Duration.ofSeconds(3)),
        connectionLimits(s),
        s.size("SPB_MAX_PUSH_INFLATED_BYTES", 512L << 20),
        s.integer("SPB_MAX_DELTA_DEPTH", 250),
        s.duration("SPB_PUSH_TIME_LIMIT", Duration.ofMinutes(10)),
        s.path("SPB_RUNNER_KEYS", dataDir.resolve(DataDir.KEYS).resolve(DataDir.RUNNER_KEYS))
            .normalize());
  }

  private static ConnectionLimits connectionLimits(Settings s) {
    // Unset, the cap is the default lowered to fit the descriptor limit (0); set, it must fit (see
    // capFor).
    return new ConnectionLimits(
        s.duration("SPB_HEAD_TIMEOUT", Duration.ofSeconds(10)),
        s.duration("SPB_IDLE_TIMEOUT", Duration.ofMinutes(5)),
        s.isSet("SPB_MAX_CONNECTIONS")
            ? s.integer("SPB_MAX_CONNECTIONS", 0, 1, Integer.MAX_VALUE)
            : 0,
        s.integer("SPB_MAX_CONNECTIONS_PER_ADDRESS", 1024));
  }

  /** Builds the JSON form from environment variables (unset or blank ones keep their defaults). */
  public static JsonObject fromEnvironment(Map<String, String> env) {
    return new JsonObject(Settings.byKey(env, ENVIRONMENT, false));
  }

  /** The URL clients reach the gateway at, given the port actually bound. */
  public String publicUrl(int boundPort) {
    if (publicUrl != null) {
      return publicUrl;
    }
    String host = httpHost.contains(":") ? "[" + httpHost + "]" : httpHost;
    return "http://" + ("0.0.0.0".equals(httpHost) ? "127.0.0.1" : host) + ":" + boundPort;
  }
}
