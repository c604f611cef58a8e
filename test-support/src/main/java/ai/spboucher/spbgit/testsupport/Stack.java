package ai.spboucher.spbgit.testsupport;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parts of the product an integration test runs for real, brought up in one statement and
 * closed in the reverse order: nats-server ({@link NatsServer}), a gateway and runners in this JVM,
 * and what a test drives them with (a {@link RestClient} as the owner, the git CLI, a NATS
 * connection of its own to play a runner).
 *
 * <pre>{@code
 * try (Stack stack = Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "m"))
 *     .runner("r1", env).start()) { ... }
 * }</pre>
 *
 * <p>Everything lives under the directory given to {@link #builder}: {@code nats/}, the gateway's
 * data ({@code data/} unless {@link Builder#gatewayDir} names another), {@code home/} for git. A
 * gateway gets the stack's NATS URL, and {@link Builder#start} returns once it is ready ({@code
 * /readyz}; a restart does not wait). Gateways and runners start through the launchers their
 * modules register ({@link StackLaunchers}).
 *
 * <p>Threading: one test thread drives a stack.
 */
public final class Stack implements AutoCloseable {

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);

  private final Path dir;
  private final NatsServer nats;
  private final String natsUrl;
  private final Path gatewayDir;
  private final JsonObject gatewayConfig;
  private final Clock builderClock;
  private StackGateway gateway;
  private RestClient owner;
  private Connection natsConnection;
  private GitCli git;
  private final Deque<AutoCloseable> runners = new ArrayDeque<>();

  private Stack(Builder builder, NatsServer nats) {
    this.dir = builder.dir;
    this.nats = nats;
    this.natsUrl = nats != null ? nats.url() : builder.natsUrl;
    this.gatewayDir = dir.resolve(builder.gatewayDir);
    this.gatewayConfig = builder.gatewayConfig;
    this.builderClock = builder.clock;
  }

  /** A stack living in {@code dir} (a test's temporary directory). */
  public static Builder builder(Path dir) {
    return new Builder(dir);
  }

  /** What to bring up; {@link #start} brings it up. */
  public static final class Builder {
    private final Path dir;
    private boolean startNats;
    private String natsUrl;
    private JsonObject gatewayConfig;
    private String gatewayDir = "data";
    private Clock clock = Clock.systemUTC();
    private final Map<String, Map<String, String>> runners = new LinkedHashMap<>();

    private Builder(Path dir) {
      this.dir = dir;
    }

    /** A nats-server with JetStream of the stack's own. */
    public Builder nats() {
      this.startNats = true;
      return this;
    }

    /** NATS the test started and closes itself (a cluster): one URL or several comma-separated. */
    public Builder natsAt(String url) {
      this.natsUrl = url;
      return this;
    }

    /**
     * A gateway with {@code config} (its JSON settings); {@code natsUrl} is the stack's unless
     * {@code config} names one.
     */
    public Builder gateway(JsonObject config) {
      this.gatewayConfig = config.copy();
      return this;
    }

    /** The gateway's data directory, under the stack's ({@code data} unless told). */
    public Builder gatewayDir(String name) {
      this.gatewayDir = name;
      return this;
    }

    /** The time the gateway reads (jobs' deadlines, token lifetimes). */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /**
     * A runner {@code id} started once the gateway is up, with {@code env} as its environment;
     * {@code SPB_NATS_URL} and {@code SPB_RUNNER_ID} are the stack's unless {@code env} sets them.
     */
    public Builder runner(String id, Map<String, String> env) {
      runners.put(id, Map.copyOf(env));
      return this;
    }

    /** Brings it all up; closes what came up if a part does not. */
    public Stack start() throws Exception {
      Stack stack = new Stack(this, startNats ? NatsServer.start(dir.resolve("nats")) : null);
      try {
        if (gatewayConfig != null) {
          stack.startGateway();
          if (stack.natsUrl != null && !gatewayConfig.containsKey("natsUrl")) {
            stack.owner.awaitReady(READY_TIMEOUT);
          }
        }
        for (var runner : runners.entrySet()) {
          stack.startRunner(runner.getKey(), runner.getValue());
        }
        return stack;
      } catch (Exception | Error e) {
        stack.close();
        throw e;
      }
    }
  }

  public Path dir() {
    return dir;
  }

  /** The stack's own nats-server; null when it runs on NATS started elsewhere, or none. */
  public NatsServer nats() {
    return nats;
  }

  /** What the gateway and the runners connect to; null for a stack without NATS. */
  public String natsUrl() {
    return natsUrl;
  }

  /** The running gateway. */
  public StackGateway gateway() {
    if (gateway == null) {
      throw new IllegalStateException("the stack runs no gateway");
    }
    return gateway;
  }

  /** The running gateway as the type its module's launcher made ({@code TestGateway}). */
  public <G extends StackGateway> G gateway(Class<G> type) {
    return type.cast(gateway());
  }

  /** The gateway's API, spoken to as its owner. */
  public RestClient owner() {
    gateway();
    return owner;
  }

  /**
   * A NATS connection of the test's own (to take job requests and report as a runner does, say),
   * opened on first use and closed with the stack.
   */
  public Connection natsConnection() throws Exception {
    if (natsConnection == null) {
      natsConnection = Nats.connect(natsUrl);
    }
    return natsConnection;
  }

  /** The git CLI with its own {@code HOME} under the stack's directory. */
  public GitCli git() throws Exception {
    if (git == null) {
      git = new GitCli(Files.createDirectories(dir.resolve("home")));
    }
    return git;
  }

  /**
   * Creates repository {@code repo} as the owner and pushes {@code main} of a fresh work tree
   * {@code workTree} under the stack's directory ({@link GitCli#workTree}: one commit); the work
   * tree.
   */
  public Path createRepo(String repo, String workTree) throws Exception {
    var created = owner().post("/api/v1/repos", new JsonObject().put("name", repo).encode());
    if (created.statusCode() != 201) {
      throw new AssertionError(
          "cannot create " + repo + ": " + created.statusCode() + " " + created.body());
    }
    Path work = git().workTree(dir, workTree);
    git().ok(work, "push", "-q", pushUrl(repo, gateway.ownerToken()), "main");
    return work;
  }

  /** The repository's URL with {@code token} as the Basic password, as git clients send it. */
  public String pushUrl(String repo, String token) {
    return gateway().baseUrl().replace("http://", "http://agent:" + token + "@")
        + "/"
        + repo
        + ".git";
  }

  /**
   * Starts the gateway again as the builder configured it, on the data the last one left (after
   * {@link #stopGateway}); it listens on a new port. It does not wait for NATS (a test may start it
   * while NATS is down): {@code owner().awaitReady(...)} does.
   */
  public StackGateway startGateway() throws Exception {
    return startGateway(builderClock);
  }

  /** Like {@link #startGateway()}, with a gateway that reads the time from {@code clock}. */
  public StackGateway startGateway(Clock clock) throws Exception {
    if (gateway != null) {
      throw new IllegalStateException("the gateway is running");
    }
    JsonObject config = gatewayConfig.copy();
    if (natsUrl != null && !config.containsKey("natsUrl")) {
      config.put("natsUrl", natsUrl);
    }
    gateway =
        StackLaunchers.find(StackLaunchers.Gateway.class, "gateway")
            .start(gatewayDir, config, clock);
    owner = new RestClient(gateway.baseUrl(), gateway.ownerToken());
    return gateway;
  }

  /** {@link #stopGateway} then {@link #startGateway(Clock)}. */
  public StackGateway restartGateway(Clock clock) throws Exception {
    stopGateway();
    return startGateway(clock);
  }

  /** Stops the gateway (a restart is {@link #startGateway} after this); its data stays. */
  public void stopGateway() {
    if (gateway != null) {
      gateway.close();
      gateway = null;
      owner = null;
    }
  }

  /**
   * Starts runner {@code id} with {@code env}, as {@link Builder#runner} does; closing what it
   * returns (or the stack) stops it.
   */
  public AutoCloseable startRunner(String id, Map<String, String> env) throws Exception {
    Map<String, String> all = new HashMap<>();
    if (natsUrl != null) {
      all.put("SPB_NATS_URL", natsUrl);
    }
    all.put("SPB_RUNNER_ID", id);
    all.putAll(env);
    AutoCloseable runner =
        StackLaunchers.find(StackLaunchers.Runner.class, "runner").start(Map.copyOf(all));
    runners.push(runner);
    return runner;
  }

  /** Stops a runner this stack started, before the stack closes. */
  public void stopRunner(AutoCloseable runner) throws Exception {
    if (runners.remove(runner)) {
      runner.close();
    }
  }

  /** Closes the runners (the last started first), the test's connection, the gateway, NATS. */
  @Override
  public void close() throws Exception {
    List<AutoCloseable> parts = new ArrayList<>(runners);
    runners.clear();
    parts.add(natsConnection);
    parts.add(gateway);
    parts.add(nats);
    gateway = null;
    Exception failure = null;
    for (AutoCloseable part : parts) {
      try {
        if (part != null) {
          part.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
