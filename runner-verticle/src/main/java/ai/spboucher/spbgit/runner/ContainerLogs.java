package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One container's output attached to the job's {@link LogPump}. docker-java's stream thread offers
 * the frames and completes {@link #ended} when the stream ends; the job's thread waits for that
 * with {@link #awaitEnd}, so no frame of the container arrives after the runner's next line.
 */
final class ContainerLogs implements Closeable {

  private final CompletableFuture<Void> ended = new CompletableFuture<>();
  private Closeable attachment;

  private ContainerLogs() {}

  /** Attaches to the container before it starts, so its first byte is in the job's log. */
  static ContainerLogs attach(DockerSandbox docker, String containerId, LogPump pump)
      throws InterruptedException, IOException {
    ContainerLogs logs = new ContainerLogs();
    logs.attachment = docker.attach(containerId, pump::offer, () -> logs.ended.complete(null));
    return logs;
  }

  /** Waits for the container's log stream to end; false when the timeout passed first. */
  boolean awaitEnd(Duration timeout) throws InterruptedException {
    try {
      ended.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      // Never completed exceptionally: the stream's end is the end, however it came.
      return true;
    }
  }

  /** Detaches. */
  @Override
  public void close() throws IOException {
    attachment.close();
  }
}
