package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A runner's Docker client has room for the streams of every job its slots can run at once (each
 * job follows its container's output, events and exit for as long as it runs) and still answers
 * other calls. Found by the load and abuse suite: with a fixed pool of 64 connections, the 22nd of
 * 25 jobs on one runner waited 30 s for a connection to follow its container's events and ended
 * {@code runner_error}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DockerStreamsIT {

  private static final int SLOTS = 25;

  @Test
  void everySlotsStreamsAtOnceLeaveRoomForOtherCalls() throws Exception {
    JobTestBed.requireDocker();
    ExecutorService waits =
        Executors.newFixedThreadPool(
            SLOTS,
            r -> {
              Thread t = new Thread(r, "await-exit");
              t.setDaemon(true);
              return t;
            });
    List<Closeable> streams = new ArrayList<>();
    List<Future<Long>> exits = new ArrayList<>();
    try (DockerSandbox docker =
        new DockerSandbox(
            "unix:///var/run/docker.sock", SLOTS, DockerSandbox.DEFAULT_CALL_TIMEOUT)) {
      // One container stands in for a runner's jobs: the streams are per call, whatever container
      // they follow.
      String id =
          docker
              .client()
              .createContainerCmd(JobTestBed.IMAGE)
              .withEntrypoint("sleep", "300")
              .withLabels(Map.of(SandboxSpec.RUNNER_LABEL, FaultChecks.uniqueRunnerId("streams")))
              .withNetworkDisabled(true)
              .exec()
              .getId();
      try {
        docker.start(id);
        for (int job = 0; job < SLOTS; job++) {
          streams.add(docker.attach(id, frame -> {}, () -> {}));
          streams.add(docker.watch(id));
          exits.add(waits.submit(() -> docker.awaitExit(id, Duration.ofMinutes(2))));
        }
        Thread.sleep(2000);
        assertNotNull(
            CompletableFuture.supplyAsync(() -> docker.inspect(id)).get(20, TimeUnit.SECONDS),
            "a call while every slot's streams are open");
        docker.kill(id);
        for (Future<Long> exit : exits) {
          assertEquals(
              137L, exit.get(60, TimeUnit.SECONDS), "every job's wait sees the container's end");
        }
      } finally {
        for (Closeable stream : streams) {
          stream.close();
        }
        docker.remove(id);
      }
    } finally {
      waits.shutdownNow();
    }
  }
}
