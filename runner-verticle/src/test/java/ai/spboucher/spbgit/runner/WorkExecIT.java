package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.docker.WorkVolume;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a job builds on {@code /work} runs there: a setup phase's products (a venv's {@code
 * bin/pip}, {@code node_modules/.bin}) in the agent phase's container on the runner's host volume,
 * and a program the job writes on Docker's own tmpfs, which a runner that cannot mount gives {@code
 * /work} (Docker mounts a tmpfs {@code noexec} unless told otherwise). Each container is made from
 * the runner's own {@link SandboxSpec}, with a shell script in place of the entrypoint.
 */
class WorkExecIT {

  private static final int UID = RunnerConfig.DEFAULT_SANDBOX_UID;

  /**
   * Writes a script and a copy of a real ELF program under {@code /work/bin}, as an installer
   * would.
   */
  private static final String BUILD =
      """
      set -e
      mkdir -p /work/bin
      printf '#!/bin/sh\\necho script-ran\\n' > /work/bin/tool
      cp /bin/echo /work/bin/echo-copy
      chmod +x /work/bin/tool /work/bin/echo-copy
      """;

  private static final String RUN = "/work/bin/tool && /work/bin/echo-copy elf-ran\n";

  @TempDir static Path tmp;
  static DockerSandbox docker;

  @BeforeAll
  static void connect() {
    JobTestBed.requireDocker();
    docker = new DockerSandbox("unix:///var/run/docker.sock");
  }

  @AfterAll
  static void close() throws Exception {
    if (docker != null) {
      docker.close();
    }
  }

  @Test
  void whatOneContainerWritesOnTheHostVolumeRunsInTheNext() throws Exception {
    Path jobDir = Files.createDirectories(tmp.resolve("mounted"));
    WorkVolume work = new WorkVolume(jobDir.resolve("work"), 64L << 20, UID);
    assertTrue(work.mount(), "the runner's own /work volume needs root");
    try {
      run(jobDir, work, "setup", BUILD);
      String out = run(jobDir, work, "agent", RUN);
      assertTrue(out.contains("script-ran") && out.contains("elf-ran"), out);
    } finally {
      work.release();
    }
  }

  @Test
  void whatAJobWritesOnDockersTmpfsRunsThere() throws Exception {
    Path jobDir = Files.createDirectories(tmp.resolve("unmounted"));
    WorkVolume work = new WorkVolume(jobDir.resolve("work"), 64L << 20, UID);
    String out = run(jobDir, work, "all", BUILD + RUN);
    assertTrue(out.contains("script-ran") && out.contains("elf-ran"), out);
  }

  /**
   * Runs {@code script} in a container of the base image on {@code work} (Docker's tmpfs when it is
   * not mounted); fails unless it exits 0; returns its output.
   */
  private static String run(Path jobDir, WorkVolume work, String phase, String script)
      throws Exception {
    Path egress = Files.createDirectories(jobDir.resolve("egress"));
    SandboxSpec spec =
        SandboxSpec.builder()
            .image(JobTestBed.IMAGE)
            .jobId("work-exec-" + phase)
            .runnerId("work-exec-it")
            .uid(UID)
            .cpus(1.0)
            .memoryBytes(256L << 20)
            .pidsLimit(64)
            .workDir(work.dir())
            .egressDir(egress)
            .workIsMounted(work.isMounted())
            .diskBytes(64L << 20)
            .build();
    String id =
        docker
            .client()
            .createContainerCmd(JobTestBed.IMAGE)
            .withLabels(spec.labels())
            .withEnv(spec.environment())
            .withUser(spec.user())
            .withWorkingDir("/work")
            .withNetworkDisabled(true)
            .withHostConfig(spec.hostConfig())
            .withEntrypoint("sh", "-c", script)
            .exec()
            .getId();
    try {
      docker.start(id);
      Long code = docker.awaitExit(id, Duration.ofMinutes(1));
      String out = output(id);
      assertEquals(0L, code, phase + " container failed:\n" + out);
      return out;
    } finally {
      docker.remove(id);
    }
  }

  private static String output(String id) throws InterruptedException {
    StringBuilder out = new StringBuilder();
    docker
        .client()
        .logContainerCmd(id)
        .withStdOut(true)
        .withStdErr(true)
        .exec(
            new ResultCallback.Adapter<Frame>() {
              @Override
              public void onNext(Frame frame) {
                synchronized (out) {
                  out.append(new String(frame.getPayload(), StandardCharsets.UTF_8));
                }
              }
            })
        .awaitCompletion(30, TimeUnit.SECONDS);
    synchronized (out) {
      return out.toString();
    }
  }
}
