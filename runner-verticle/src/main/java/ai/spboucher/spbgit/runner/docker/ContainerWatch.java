package ai.spboucher.spbgit.runner.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the engine itself reports about one container: every signal it sent the container ({@code
 * kill} events) and the container's death ({@code die}). This tells a container the job's own
 * processes ended from one the engine stopped: a stopping or restarting engine sends its containers
 * SIGTERM, and an exit code of 143 alone cannot say who sent it.
 *
 * <p>Threading: events arrive on docker-java's stream thread; the accessors may be called from any
 * thread.
 */
public final class ContainerWatch implements Closeable {

  private final List<String> signals = new CopyOnWriteArrayList<>();
  private final CountDownLatch died = new CountDownLatch(1);
  private final ResultCallback.Adapter<Event> stream;

  private ContainerWatch(DockerClient docker, String containerId) {
    this.stream =
        docker
            .eventsCmd()
            .withContainerFilter(containerId)
            .withEventFilter("kill", "die")
            .exec(
                new ResultCallback.Adapter<>() {
                  @Override
                  public void onNext(Event event) {
                    if ("kill".equals(event.getAction())) {
                      signals.add(
                          event.getActor() == null
                              ? "?"
                              : String.valueOf(
                                  event.getActor().getAttributes().getOrDefault("signal", "?")));
                    } else if ("die".equals(event.getAction())) {
                      died.countDown();
                    }
                  }
                });
  }

  /** Starts watching; call before the container starts, so no event is missed. Blocking. */
  static ContainerWatch start(DockerClient docker, String containerId)
      throws InterruptedException, IOException {
    ContainerWatch watch = new ContainerWatch(docker, containerId);
    if (!watch.stream.awaitStarted(30, TimeUnit.SECONDS)) {
      watch.close();
      throw new IllegalStateException(
          "could not follow the engine's events for container " + containerId);
    }
    return watch;
  }

  /**
   * The signals (as numbers) the engine sent the container so far, by anyone's request, in order.
   */
  public List<String> signals() {
    return List.copyOf(signals);
  }

  /**
   * Waits until the engine reported the container's death, so every signal sent before it has been
   * seen (the engine reports events in order). False if it did not within {@code timeout}.
   */
  public boolean awaitDeath(Duration timeout) throws InterruptedException {
    return died.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() throws IOException {
    stream.close();
  }
}
