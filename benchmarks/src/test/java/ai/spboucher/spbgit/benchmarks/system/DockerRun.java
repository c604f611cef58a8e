package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.runner.RunnerConfig;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import com.github.dockerjava.api.model.AccessMode;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The baseline: the same hardened container started with the plain {@code docker} CLI. Its flags
 * are derived from the runner's own {@link SandboxSpec}, so the baseline cannot drift from what the
 * runner asks the engine for; a host-config setting this translation does not know fails loudly
 * instead of being left out.
 */
final class DockerRun {

  private DockerRun() {}

  /**
   * A spec like the runner builds for a job with these limits, with a fresh empty {@code /work} and
   * {@code /run/spb} under {@code dir} and the environment of an exec job running {@code exec}.
   */
  static SandboxSpec spec(
      Path dir, String name, String exec, double cpus, long memoryBytes, long pids, long diskBytes)
      throws IOException {
    Path work = Files.createDirectories(dir.resolve(name).resolve("work"));
    Path egress = Files.createDirectories(dir.resolve(name).resolve("egress"));
    Files.setPosixFilePermissions(egress, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.setPosixFilePermissions(work, PosixFilePermissions.fromString("rwx------"));
    Files.setAttribute(work, "unix:uid", RunnerConfig.DEFAULT_SANDBOX_UID);
    Files.setAttribute(work, "unix:gid", RunnerConfig.DEFAULT_SANDBOX_UID);
    Map<String, String> env =
        Map.of(
            "SPB_JOB_ID",
            name,
            "SPB_REPO",
            "bench",
            "SPB_CLONE_URL",
            SandboxSpec.GIT_URL + "/bench.git",
            "SPB_BASE_REF",
            "main",
            "SPB_TASK",
            "benchmark job",
            "SPB_MODE",
            "exec",
            "SPB_EXEC",
            exec,
            "SPB_TEST_COMMAND",
            "");
    return SandboxSpec.builder()
        .image(SystemBed.IMAGE)
        .jobId(name)
        .runnerId("bench")
        .uid(RunnerConfig.DEFAULT_SANDBOX_UID)
        .env(env)
        .cpus(cpus)
        .memoryBytes(memoryBytes)
        .pidsLimit(pids)
        .workDir(work)
        .egressDir(egress)
        .workIsMounted(true)
        .diskBytes(diskBytes)
        .build();
  }

  /**
   * {@code docker run} arguments (without the image's command) for {@code spec}; {@code detach}
   * adds {@code -d}, and {@code entrypoint} (if not null) replaces the image's entrypoint.
   */
  static List<String> command(SandboxSpec spec, boolean detach, String entrypoint) {
    HostConfig host = spec.hostConfig();
    List<String> args = new ArrayList<>(List.of("docker", "run"));
    if (detach) {
      args.add("-d");
    }
    args.addAll(
        List.of("--name", "spb-job-" + spec.jobId(), "--user", spec.user(), "--workdir", "/work"));
    spec.labels().forEach((k, v) -> args.addAll(List.of("--label", k + "=" + v)));
    spec.environment().forEach(e -> args.addAll(List.of("--env", e)));
    if (Boolean.TRUE.equals(host.getReadonlyRootfs())) {
      args.add("--read-only");
    }
    args.addAll(List.of("--network", host.getNetworkMode()));
    for (Capability cap : host.getCapDrop()) {
      args.addAll(List.of("--cap-drop", cap.name()));
    }
    for (String opt : host.getSecurityOpts()) {
      args.addAll(List.of("--security-opt", opt));
    }
    if (Boolean.TRUE.equals(host.getPrivileged())) {
      throw new IllegalStateException("the sandbox spec asks for a privileged container");
    }
    args.addAll(List.of("--cpus", String.format(Locale.ROOT, "%.3f", host.getNanoCPUs() / 1e9)));
    args.addAll(
        List.of("--memory", host.getMemory() + "b", "--memory-swap", host.getMemorySwap() + "b"));
    args.addAll(List.of("--pids-limit", String.valueOf(host.getPidsLimit())));
    args.addAll(List.of("--ipc", host.getIpcMode()));
    if (Boolean.TRUE.equals(host.getInit())) {
      args.add("--init");
    }
    for (Ulimit u : host.getUlimits()) {
      args.addAll(List.of("--ulimit", u.getName() + "=" + u.getSoftLong() + ":" + u.getHardLong()));
    }
    host.getTmpFs()
        .forEach((path, options) -> args.addAll(List.of("--tmpfs", path + ":" + options)));
    for (Bind bind : host.getBinds()) {
      args.addAll(
          List.of(
              "--volume",
              bind.getPath()
                  + ":"
                  + bind.getVolume().getPath()
                  + (bind.getAccessMode() == AccessMode.ro ? ":ro" : "")));
    }
    requireKnown(host);
    if (entrypoint != null) {
      args.addAll(List.of("--entrypoint", entrypoint));
    }
    args.add(spec.image());
    return args;
  }

  /** Settings of the host config this translation does not carry over must be unset. */
  private static void requireKnown(HostConfig host) {
    if (host.getCapAdd() != null && host.getCapAdd().length > 0
        || host.getDevices() != null
        || host.getCpuShares() != null
        || host.getCpuQuota() != null
        || host.getCpuPeriod() != null
        || host.getMemoryReservation() != null
        || host.getShmSize() != null
        || host.getStorageOpt() != null
        || host.getRuntime() != null
        || host.getUsernsMode() != null
        || host.getPidMode() != null
        || host.getMounts() != null
        || host.getDns() != null
        || host.getExtraHosts() != null) {
      throw new IllegalStateException(
          "the sandbox spec sets a host-config option the baseline does not "
              + "translate: update DockerRun.command");
    }
  }

  /** Removes the container, whatever its state. */
  static void remove(String name) throws Exception {
    new ProcessBuilder("docker", "rm", "-f", name)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start()
        .waitFor();
  }
}
