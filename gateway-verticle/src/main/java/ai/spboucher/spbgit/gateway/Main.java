package ai.spboucher.spbgit.gateway;

import ai.spboucher.spbgit.common.Launcher;
import ai.spboucher.spbgit.common.RevocationList;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import ai.spboucher.spbgit.hooks.RefScope;
import ai.spboucher.spbgit.proto.AuditChain;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * {@code java -jar spb-gateway.jar [serve]} starts the gateway; {@code mint-job-token --repo R
 * --job J --ttl SECONDS} prints a job token signed with the data directory's key. Configuration
 * comes from the environment (docs/operations.md).
 */
public final class Main {

  static final int USAGE = Launcher.USAGE;
  private static final String USAGE_TEXT =
      """
      usage: spb-gateway [serve]
             spb-gateway mint-job-token --repo REPO --job JOB [--ttl SECONDS]
             spb-gateway audit verify
             spb-gateway rotate-signing-key
             spb-gateway rotate-job-bus-key""";

  private static final Launcher LAUNCHER = new Launcher("spb-gateway");

  private Main() {}

  public static void main(String[] args) {
    Map<String, String> env = System.getenv();
    LAUNCHER.logging(env);
    String command = args.length == 0 ? "serve" : args[0];
    try {
      GatewayConfig config = GatewayConfig.from(GatewayConfig.fromEnvironment(env));
      switch (command) {
        case "serve" -> serve(config);
        case "mint-job-token" -> System.exit(mintJobToken(config, args, System.out));
        case "audit" -> System.exit(audit(config, args));
        case "rotate-signing-key" -> System.exit(rotateSigningKey(config));
        case "rotate-job-bus-key" -> System.exit(rotateJobBusKey(config));
        case "help", "--help", "-h" -> System.out.println(USAGE_TEXT);
        default -> exit("unknown command '" + command + "'\n" + USAGE_TEXT);
      }
    } catch (IllegalArgumentException | RequestException.Invalid e) {
      // A bad argument, or a repository name outside the rules.
      exit(e.getMessage());
    }
  }

  private static void serve(GatewayConfig config) {
    // One registry for Vert.x's own metrics (HTTP, pools, event bus) and the gateway's job metrics.
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Vertx vertx =
        Vertx.builder()
            .with(
                new VertxOptions()
                    .setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)))
            .withMetrics(new MicrometerMetricsFactory(registry))
            .build();
    LAUNCHER.serve(
        () ->
            vertx
                .deployVerticle(new GatewayVerticle(config, Clock.systemUTC(), registry))
                .toCompletionStage(),
        () -> vertx.close().toCompletionStage());
  }

  static int mintJobToken(GatewayConfig config, String[] args, PrintStream out) {
    Map<String, String> options = options(args);
    String repo = options.get("--repo");
    String job = options.get("--job");
    if (repo == null || job == null) {
      throw new IllegalArgumentException("mint-job-token needs --repo and --job");
    }
    Duration ttl = Duration.ofSeconds(Long.parseLong(options.getOrDefault("--ttl", "3600")));
    // Validate everything before touching the data directory, so a typo changes nothing on disk.
    RepoName.of(repo);
    RefScope.forJob(job);
    if (ttl.toSeconds() < 1 || ttl.compareTo(JobTokenVerifier.MAX_LIFETIME) > 0) {
      throw new IllegalArgumentException(
          "--ttl must be between 1 and " + JobTokenVerifier.MAX_LIFETIME.toSeconds());
    }
    try {
      Clock clock = Clock.systemUTC();
      SigningKey key = SigningKey.loadOrCreate(config.dataDir().resolve(DataDir.KEYS));
      RevocationList revocations =
          RevocationList.load(config.dataDir().resolve(DataDir.REVOCATIONS), clock);
      out.println(new JobTokens(key, revocations, clock).issue(job, repo, ttl));
      return 0;
    } catch (IOException | GeneralSecurityException e) {
      System.err.println("spb-gateway: cannot read the data directory: " + e.getMessage());
      return 1;
    }
  }

  /**
   * Replaces the job-token signing key; tokens signed with the old one keep verifying until they
   * expire.
   */
  static int rotateSigningKey(GatewayConfig config) {
    return rotate(
        () -> SigningKey.rotate(config.dataDir().resolve(DataDir.KEYS)),
        "job-token signing key",
        "the old key keeps verifying its tokens until they expire",
        "the signing key");
  }

  /**
   * Replaces the key that signs job requests and cancels; runners keep accepting the old one, read
   * from the retired public keys beside the new one, and pick the new one up when it first signs a
   * request.
   */
  static int rotateJobBusKey(GatewayConfig config) {
    Path keys = config.dataDir().resolve(DataDir.KEYS);
    return rotate(
        () -> SigningKey.rotate(SigningKey.KeyFiles.jobBus(keys)),
        "job-bus signing key",
        "runners given "
            + keys.resolve(SigningKey.JOB_BUS_DIR)
            + " read it when it first signs a request",
        "the job-bus key");
  }

  /** A key rotation, which reads and writes the data directory. */
  private interface Rotation {
    SigningKey rotate() throws IOException, GeneralSecurityException;
  }

  private static int rotate(Rotation rotation, String key, String note, String failing) {
    try {
      System.out.println(
          "new "
              + key
              + " "
              + rotation.rotate().keyId()
              + "; restart the gateway to use it ("
              + note
              + ")");
      return 0;
    } catch (IOException | GeneralSecurityException e) {
      System.err.println("spb-gateway: cannot rotate " + failing + ": " + e.getMessage());
      return 1;
    }
  }

  /**
   * {@code audit verify}: checks the audit log's hash chain; exit 0 when intact, 1 naming the first
   * bad line.
   */
  static int audit(GatewayConfig config, String[] args) {
    if (args.length != 2 || !"verify".equals(args[1])) {
      throw new IllegalArgumentException("usage: spb-gateway audit verify");
    }
    Path file = config.dataDir().resolve(DataDir.AUDIT_LOG);
    try {
      AuditChain.Result result = AuditLog.verify(file);
      (result.ok() ? System.out : System.err).println(file + ": " + result.message());
      return result.ok() ? 0 : 1;
    } catch (IOException e) {
      System.err.println("spb-gateway: cannot read " + file + ": " + e.getMessage());
      return 1;
    }
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 1; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --option value, got '" + args[i] + "'");
      }
      options.put(args[i], args[++i]);
    }
    return options;
  }

  private static void exit(String message) {
    throw LAUNCHER.refuse(message);
  }
}
