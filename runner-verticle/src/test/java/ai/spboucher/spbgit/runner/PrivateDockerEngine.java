package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import com.github.dockerjava.api.model.Container;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A second Docker engine of the test's own, so a test can restart an engine under a running job
 * without touching the machine's shared one: its own data and exec roots (so its own containerd),
 * pid file and socket, an empty daemon configuration, no bridge and no iptables rules (job
 * containers have no network anyway). It runs as a child process of the test and is stopped, and
 * its data removed, on {@link #close}.
 */
final class PrivateDockerEngine implements AutoCloseable {

  private static final long READY_TIMEOUT_MS = 60_000;

  private final Path dir;
  private final Path socket;
  private Process process;
  private int starts;

  private PrivateDockerEngine(Path dir) {
    this.dir = dir;
    this.socket = dir.resolve("docker.sock");
  }

  /** Starts dockerd and waits until it answers; fails with dockerd's log if it does not. */
  static PrivateDockerEngine start(Path dir) throws Exception {
    PrivateDockerEngine engine = new PrivateDockerEngine(Files.createDirectories(dir));
    Files.writeString(dir.resolve("daemon.json"), "{}\n");
    engine.startProcess();
    return engine;
  }

  /** The {@code DOCKER_HOST} of this engine. */
  String host() {
    return "unix://" + socket;
  }

  /**
   * Copies {@code image} from the machine's engine into this one ({@code docker save | docker
   * load}).
   */
  void loadImage(String image) throws Exception {
    Process save =
        new ProcessBuilder("docker", "save", image)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    Process load =
        new ProcessBuilder("docker", "-H", host(), "load")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("load.log").toFile())
            .start();
    try (var in = save.getInputStream();
        var out = load.getOutputStream()) {
      in.transferTo(out);
    }
    if (save.waitFor() != 0 || load.waitFor() != 0) {
      throw new IOException(
          "cannot load "
              + image
              + " into the private engine: "
              + Files.readString(dir.resolve("load.log")));
    }
  }

  /**
   * Stops dockerd as an operator does (SIGTERM: it stops its containers first), keeping its data.
   */
  void stop() throws Exception {
    stopProcess();
  }

  /** SIGKILL, like a crash: dockerd stops nothing and answers nothing more. */
  void crash() throws Exception {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("dockerd did not die from SIGKILL");
    }
  }

  /**
   * SIGSTOP: dockerd is alive, holds its connections and answers nothing, like an engine that is
   * wedged or swapped out. Its containers (children of containerd, which keeps running) go on.
   */
  void freeze() throws Exception {
    signal("STOP");
  }

  /** SIGCONT after {@link #freeze}. */
  void thaw() throws Exception {
    signal("CONT");
  }

  private void signal(String name) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IOException("cannot send SIG" + name + " to dockerd");
    }
  }

  /**
   * Starts dockerd again on the same data, after {@link #stop} or {@link #crash}; if it runs, makes
   * sure it is not frozen.
   */
  void startAgain() throws Exception {
    if (process == null || !process.isAlive()) {
      startProcess();
    } else {
      thaw();
    }
  }

  /** Containers of this engine, in any state, labelled as belonging to the job. */
  List<Container> jobContainers(String jobId) throws IOException {
    try (DockerSandbox docker = new DockerSandbox(host())) {
      return docker
          .client()
          .listContainersCmd()
          .withShowAll(true)
          .withLabelFilter(Map.of(SandboxSpec.JOB_LABEL, jobId))
          .exec();
    }
  }

  /** Every container of this engine, in any state. */
  List<Container> allContainers() throws IOException {
    try (DockerSandbox docker = new DockerSandbox(host())) {
      return docker.client().listContainersCmd().withShowAll(true).exec();
    }
  }

  /** What dockerd printed, over all its starts. */
  String log() throws IOException {
    StringBuilder all = new StringBuilder();
    for (int i = 1; i <= starts; i++) {
      Path file = dir.resolve("dockerd-" + i + ".log");
      if (Files.exists(file)) {
        all.append(Files.readString(file));
      }
    }
    return all.toString();
  }

  private void startProcess() throws Exception {
    removeStalePidFiles();
    starts++;
    List<String> command =
        new ArrayList<>(
            List.of(
                "dockerd",
                "--config-file",
                dir.resolve("daemon.json").toString(),
                "--data-root",
                dir.resolve("data").toString(),
                "--exec-root",
                dir.resolve("exec").toString(),
                "--pidfile",
                dir.resolve("docker.pid").toString(),
                "-H",
                host(),
                "--bridge",
                "none",
                "--iptables=false",
                "--ip6tables=false",
                "--ip-masq=false"));
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("dockerd-" + starts + ".log").toFile())
            .start();
    long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
    while (true) {
      try (DockerSandbox docker = new DockerSandbox(host())) {
        docker.client().pingCmd().exec();
        return;
      } catch (RuntimeException e) {
        if (!process.isAlive()) {
          throw new IOException(
              "the private dockerd exited with " + process.exitValue() + ":\n" + log());
        }
        if (System.currentTimeMillis() > deadline) {
          throw new IOException(
              "the private dockerd did not answer within " + READY_TIMEOUT_MS + " ms:\n" + log());
        }
        Thread.sleep(200);
      }
    }
  }

  /**
   * A crash leaves dockerd's and containerd's pid files behind (containerd dies with dockerd). If
   * the kernel has since given such a pid to an unrelated process, dockerd takes it for "containerd
   * is still running" and waits for a socket nobody serves. A pid file whose process is not one of
   * this engine's goes before a start.
   */
  private void removeStalePidFiles() throws IOException {
    for (Path pidFile :
        List.of(dir.resolve("docker.pid"), dir.resolve("exec/containerd/containerd.pid"))) {
      if (!Files.exists(pidFile)) {
        continue;
      }
      Path cmdline = Path.of("/proc", Files.readString(pidFile).trim(), "cmdline");
      boolean ours = false;
      try {
        ours = new String(Files.readAllBytes(cmdline)).contains(dir.toAbsolutePath().toString());
      } catch (IOException | java.nio.file.InvalidPathException gone) {
        // No such process: the pid file is stale.
      }
      if (!ours) {
        Files.delete(pidFile);
      }
    }
  }

  private void stopProcess() throws Exception {
    if (process == null || !process.isAlive()) {
      return;
    }
    process.destroy();
    // dockerd gives its containers up to 15 s to stop before it exits.
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  /** Removes every container, stops dockerd and deletes its data. */
  @Override
  public void close() throws Exception {
    if (process != null && process.isAlive()) {
      try (DockerSandbox docker = new DockerSandbox(host())) {
        for (Container c : docker.client().listContainersCmd().withShowAll(true).exec()) {
          docker.remove(c.getId());
        }
      } catch (RuntimeException e) {
        // The engine is going anyway; its data directory goes with it below.
      }
    }
    stopProcess();
    unmountLeftovers();
    new ProcessBuilder(
            "rm",
            "-rf",
            "--one-file-system",
            dir.resolve("data").toString(),
            dir.resolve("exec").toString())
        .inheritIO()
        .start()
        .waitFor(60, TimeUnit.SECONDS);
  }

  /**
   * dockerd bind-mounts its data root onto itself (to make it a private mount) and undoes that when
   * it stops; a start after a crash mounts it once more, so one can remain, as can a layer a crash
   * left mounted. Unmounts whatever is still mounted under this engine's directory, deepest first.
   */
  private void unmountLeftovers() throws Exception {
    String prefix = dir.toAbsolutePath() + "/";
    for (int pass = 0; pass < 10; pass++) {
      List<String> mounts = new ArrayList<>();
      for (String line : Files.readAllLines(Path.of("/proc/self/mounts"))) {
        String target = line.split(" ")[1].replace("\\040", " ");
        if (target.startsWith(prefix)) {
          mounts.add(target);
        }
      }
      if (mounts.isEmpty()) {
        return;
      }
      mounts.sort(java.util.Comparator.comparingInt(String::length).reversed());
      for (String target : mounts) {
        new ProcessBuilder("umount", target).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
