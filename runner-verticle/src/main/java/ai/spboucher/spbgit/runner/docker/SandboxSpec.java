package ai.spboucher.spbgit.runner.docker;

import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import com.github.dockerjava.api.model.Volume;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything about one job's container that the hardening depends on, as plain data: the image, the
 * environment (no secret: the job token and the model key stay with the runner), the labels, and a
 * {@link HostConfig} with a read-only root, no network, no capabilities, no new privileges, and
 * CPU, memory (no swap) and pid limits. Built with {@link #builder()}, which names every setting.
 *
 * @param uid the uid and gid the container runs as ({@code SPB_SANDBOX_UID}), which own its {@code
 *     /work}
 * @param noticeDir for llm jobs, the runner's breach-notice directory, mounted read-only at {@code
 *     /work/.spb}; null for exec jobs
 */
public record SandboxSpec(
    String image,
    String jobId,
    String runnerId,
    int uid,
    Map<String, String> env,
    double cpus,
    long memoryBytes,
    long pidsLimit,
    Path workDir,
    Path egressDir,
    boolean workIsMounted,
    long diskBytes,
    Path noticeDir) {

  /** Label carrying the job id on every job container. */
  public static final String JOB_LABEL = "spb.job";

  /** Label carrying the runner id: what a restarted runner looks for to clean up after itself. */
  public static final String RUNNER_LABEL = "spb.runner";

  /** The proxy address inside the container, forwarded to the runner's unix socket. */
  public static final String PROXY_URL = "http://127.0.0.1:3128";

  /**
   * The model endpoint inside an llm job's container, relayed by the agent to {@code
   * /run/spb/model.sock}.
   */
  public static final String MODEL_URL = "http://127.0.0.1:3129";

  /** The git relay inside the container, relayed by the agent to {@code /run/spb/git.sock}. */
  public static final String GIT_URL = "http://127.0.0.1:3130";

  static final String TMP_SIZE = "64m";

  /** Where {@link #noticeDir} is mounted. */
  public static final String NOTICE_MOUNT = "/work/.spb";

  public SandboxSpec {
    env = Map.copyOf(env);
  }

  /**
   * A builder with nothing set but an empty environment, a host-mounted {@code /work} and no notice
   * mount.
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Names each setting of a {@link SandboxSpec}, as nats.java's {@code Options.Builder} does. */
  public static final class Builder {
    private String image;
    private String jobId;
    private String runnerId;
    private int uid;
    private Map<String, String> env = Map.of();
    private double cpus;
    private long memoryBytes;
    private long pidsLimit;
    private Path workDir;
    private Path egressDir;
    private boolean workIsMounted = true;
    private long diskBytes;
    private Path noticeDir;

    private Builder() {}

    public Builder image(String image) {
      this.image = image;
      return this;
    }

    public Builder jobId(String jobId) {
      this.jobId = jobId;
      return this;
    }

    public Builder runnerId(String runnerId) {
      this.runnerId = runnerId;
      return this;
    }

    public Builder uid(int uid) {
      this.uid = uid;
      return this;
    }

    public Builder env(Map<String, String> env) {
      this.env = env;
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

    public Builder pidsLimit(long pidsLimit) {
      this.pidsLimit = pidsLimit;
      return this;
    }

    public Builder workDir(Path workDir) {
      this.workDir = workDir;
      return this;
    }

    public Builder egressDir(Path egressDir) {
      this.egressDir = egressDir;
      return this;
    }

    public Builder workIsMounted(boolean workIsMounted) {
      this.workIsMounted = workIsMounted;
      return this;
    }

    public Builder diskBytes(long diskBytes) {
      this.diskBytes = diskBytes;
      return this;
    }

    /** For llm jobs; exec jobs leave it null. */
    public Builder noticeDir(Path noticeDir) {
      this.noticeDir = noticeDir;
      return this;
    }

    /** Fails on a missing image, job id, runner id or egress directory. */
    public SandboxSpec build() {
      Objects.requireNonNull(image, "image");
      Objects.requireNonNull(jobId, "jobId");
      Objects.requireNonNull(runnerId, "runnerId");
      Objects.requireNonNull(egressDir, "egressDir");
      return new SandboxSpec(
          image,
          jobId,
          runnerId,
          uid,
          env,
          cpus,
          memoryBytes,
          pidsLimit,
          workDir,
          egressDir,
          workIsMounted,
          diskBytes,
          noticeDir);
    }
  }

  /** The container's user, {@code uid:gid} (the gid is the uid). */
  public String user() {
    return uid + ":" + uid;
  }

  public Map<String, String> labels() {
    return Map.of(JOB_LABEL, jobId, RUNNER_LABEL, runnerId);
  }

  /**
   * The container's environment as {@code KEY=value}, with the proxy variables ordinary tools
   * honour.
   */
  public List<String> environment() {
    Map<String, String> all = new LinkedHashMap<>();
    all.put("HOME", "/work/home");
    all.put("HTTP_PROXY", PROXY_URL);
    all.put("HTTPS_PROXY", PROXY_URL);
    all.put("http_proxy", PROXY_URL);
    all.put("https_proxy", PROXY_URL);
    // npm reads its own setting before the variables above.
    all.put("npm_config_proxy", PROXY_URL);
    all.put("NO_PROXY", "");
    all.put("no_proxy", "");
    all.putAll(env);
    List<String> list = new ArrayList<>();
    all.forEach((k, v) -> list.add(k + "=" + v));
    return list;
  }

  public HostConfig hostConfig() {
    Map<String, String> tmpfs = new LinkedHashMap<>();
    tmpfs.put("/tmp", "rw,nosuid,nodev,size=" + TMP_SIZE + ",mode=1777");
    List<Bind> binds = new ArrayList<>();
    binds.add(new Bind(egressDir.toString(), new Volume("/run/spb"), AccessMode.ro));
    if (workIsMounted) {
      binds.add(new Bind(workDir.toString(), new Volume("/work")));
    } else {
      // Without a host-side size-capped volume, Docker's own tmpfs caps /work instead. Docker
      // mounts
      // a tmpfs noexec unless told "exec"; /work holds what the job builds and runs (a venv's
      // bin/pip, node_modules/.bin, a compiled test binary), as the host volume, mounted exec,
      // does. The container is the boundary, not the mount flag.
      tmpfs.put(
          "/work",
          "rw,exec,nosuid,nodev,size=" + diskBytes + ",uid=" + uid + ",gid=" + uid + ",mode=0700");
    }
    if (noticeDir != null) {
      // Read-only and runner-owned: the agent can read the notice but cannot swap the directory for
      // a link.
      binds.add(new Bind(noticeDir.toString(), new Volume(NOTICE_MOUNT), AccessMode.ro));
    }
    return HostConfig.newHostConfig()
        .withReadonlyRootfs(true)
        .withNetworkMode("none")
        .withCapDrop(Capability.ALL)
        .withSecurityOpts(List.of("no-new-privileges"))
        .withPrivileged(false)
        .withNanoCPUs((long) (cpus * 1_000_000_000L))
        .withMemory(memoryBytes)
        .withMemorySwap(memoryBytes)
        .withPidsLimit(pidsLimit)
        .withIpcMode("private")
        // A real init as PID 1 reaps orphans (the agent's socat relay forks per connection).
        .withInit(true)
        .withUlimits(List.of(new Ulimit("nofile", 4096L, 4096L), new Ulimit("core", 0L, 0L)))
        .withTmpFs(tmpfs)
        .withBinds(binds)
        .withAutoRemove(false);
  }
}
