package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.model.ModelConfig;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Names each setting of a {@link RunnerConfig}, as nats.java's {@code Options.Builder} does, and
 * holds the documented defaults ({@link RunnerConfig#from} reads them).
 */
public final class RunnerConfigBuilder {
  private NatsSettings nats = NatsSettings.fromEnvironment(Map.of());
  String runnerId = hostName();
  int slots = 1;
  String agentImage = "spbgit/agent:latest";
  double cpus = 2;
  long memoryBytes = 4L << 30;
  long diskBytes = 2L << 30;
  Duration wallLimit = Duration.ofMinutes(30);
  long pidsLimit = 512;
  private List<String> egressAllow = List.of();
  String dockerHost = "unix:///var/run/docker.sock";
  Path workRoot = Path.of("/var/lib/spbgit-runner");
  long logCapBytes = 256L << 20;
  private ModelConfig model;
  Duration breachGrace = Duration.ofSeconds(30);
  private RunnerConfig.HostPort health;
  private Path gatewayCa;
  Duration dockerCallTimeout = DockerSandbox.DEFAULT_CALL_TIMEOUT;
  int sandboxUid = RunnerConfig.DEFAULT_SANDBOX_UID;

  /** {@code SPB_IMAGES} as written; blank for the catalogue built on {@link #agentImage}. */
  String images = "";

  long cacheBytes = 2L << 30;
  private Path gatewayKeys;
  private Path runnerKey;

  /** Null for half of {@link #cacheBytes}. */
  private Long cacheEntryBytes;

  RunnerConfigBuilder() {}

  public RunnerConfigBuilder nats(NatsSettings nats) {
    this.nats = nats;
    return this;
  }

  public RunnerConfigBuilder runnerId(String runnerId) {
    this.runnerId = runnerId;
    return this;
  }

  public RunnerConfigBuilder slots(int slots) {
    this.slots = slots;
    return this;
  }

  public RunnerConfigBuilder agentImage(String agentImage) {
    this.agentImage = agentImage;
    return this;
  }

  public RunnerConfigBuilder cpus(double cpus) {
    this.cpus = cpus;
    return this;
  }

  public RunnerConfigBuilder memoryBytes(long memoryBytes) {
    this.memoryBytes = memoryBytes;
    return this;
  }

  public RunnerConfigBuilder diskBytes(long diskBytes) {
    this.diskBytes = diskBytes;
    return this;
  }

  public RunnerConfigBuilder wallLimit(Duration wallLimit) {
    this.wallLimit = wallLimit;
    return this;
  }

  public RunnerConfigBuilder pidsLimit(long pidsLimit) {
    this.pidsLimit = pidsLimit;
    return this;
  }

  public RunnerConfigBuilder egressAllow(List<String> egressAllow) {
    this.egressAllow = egressAllow;
    return this;
  }

  public RunnerConfigBuilder dockerHost(String dockerHost) {
    this.dockerHost = dockerHost;
    return this;
  }

  public RunnerConfigBuilder workRoot(Path workRoot) {
    this.workRoot = workRoot;
    return this;
  }

  public RunnerConfigBuilder logCapBytes(long logCapBytes) {
    this.logCapBytes = logCapBytes;
    return this;
  }

  public RunnerConfigBuilder model(ModelConfig model) {
    this.model = model;
    return this;
  }

  public RunnerConfigBuilder breachGrace(Duration breachGrace) {
    this.breachGrace = breachGrace;
    return this;
  }

  public RunnerConfigBuilder health(RunnerConfig.HostPort health) {
    this.health = health;
    return this;
  }

  public RunnerConfigBuilder gatewayCa(Path gatewayCa) {
    this.gatewayCa = gatewayCa;
    return this;
  }

  public RunnerConfigBuilder dockerCallTimeout(Duration timeout) {
    this.dockerCallTimeout = timeout;
    return this;
  }

  public RunnerConfigBuilder sandboxUid(int sandboxUid) {
    this.sandboxUid = sandboxUid;
    return this;
  }

  /** {@code SPB_IMAGES}: {@code name=image,...}; blank for the default catalogue. */
  public RunnerConfigBuilder images(String images) {
    this.images = images;
    return this;
  }

  public RunnerConfigBuilder cacheBytes(long cacheBytes) {
    this.cacheBytes = cacheBytes;
    return this;
  }

  /** {@code SPB_CACHE_ENTRY_SIZE}; unset, half of {@link #cacheBytes}. */
  public RunnerConfigBuilder cacheEntryBytes(long cacheEntryBytes) {
    this.cacheEntryBytes = cacheEntryBytes;
    return this;
  }

  /** {@code SPB_GATEWAY_KEYS}: a PEM file or a directory of the gateway's job-bus keys. */
  public RunnerConfigBuilder gatewayKeys(Path gatewayKeys) {
    this.gatewayKeys = gatewayKeys;
    return this;
  }

  /** {@code SPB_RUNNER_KEY}; null for {@code <workRoot>/runner-key.pem}. */
  public RunnerConfigBuilder runnerKey(Path runnerKey) {
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

  private static String hostName() {
    try {
      String name = InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
      return name.isEmpty() ? "runner" : name;
    } catch (UnknownHostException e) {
      return "runner";
    }
  }
}
