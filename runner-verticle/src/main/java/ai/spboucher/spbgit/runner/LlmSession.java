package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.model.BreachNotice;
import ai.spboucher.spbgit.runner.model.ModelEndpoint;
import ai.spboucher.spbgit.runner.model.ProviderClient;
import ai.spboucher.spbgit.runner.model.TokenMeter;
import ai.spboucher.spbgit.runner.model.Usage;
import ai.spboucher.spbgit.runner.nats.BackgroundEvents;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import ai.spboucher.spbgit.runner.nats.EventPublisher;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The model side of one llm job: its model endpoint (the socket next to the egress proxy's), its
 * token meter, and its breach notice. The job's agent is warned before it is stopped: when the
 * budget is spent, or a grace period before the wall clock runs out, the reason goes into {@code
 * /work/.spb/breach} and the container is stopped only after that grace period, so the agent can
 * push {@code refs/agents/<job>/partial}.
 *
 * <p>Threading: opened, awaited and closed on the job's thread. The endpoint's calls are published
 * from its event loop through {@link BackgroundEvents}, which never blocks.
 */
final class LlmSession implements AutoCloseable {

  private final ProviderClient provider;
  private final String model;
  private final TokenMeter meter;
  private final ModelEndpoint endpoint;
  private final BreachNotice notice;

  /**
   * The error of the last model call that failed, as the endpoint recorded it; null while none has.
   */
  private final AtomicReference<String> lastFailure;

  private String breach;

  private LlmSession(
      ProviderClient provider,
      String model,
      TokenMeter meter,
      ModelEndpoint endpoint,
      BreachNotice notice,
      AtomicReference<String> lastFailure) {
    this.provider = provider;
    this.model = model;
    this.meter = meter;
    this.endpoint = endpoint;
    this.notice = notice;
    this.lastFailure = lastFailure;
  }

  /**
   * Starts the endpoint at {@code <egressDir>/model.sock} and creates the notice directory under
   * {@code jobDir}, for a notice owned by {@code agentUid}. Every call is published as a model call
   * and as an egress attempt to the provider's host.
   */
  static LlmSession open(
      Vertx vertx,
      ProviderClient provider,
      String model,
      Path jobDir,
      Path egressDir,
      int agentUid,
      BackgroundEvents background)
      throws IOException {
    TokenMeter meter = new TokenMeter(provider.config().tokenBudget());
    String host = provider.config().baseUrl().getHost().toLowerCase(Locale.ROOT);
    int port = provider.config().upstreamPort();
    AtomicReference<String> lastFailure = new AtomicReference<>();
    ModelEndpoint endpoint =
        ModelEndpoint.start(
            vertx,
            egressDir.resolve(ModelEndpoint.SOCKET_NAME),
            provider,
            model,
            meter,
            call -> {
              if (call.error() != null) {
                lastFailure.set(call.error());
              }
              background.modelCall(EventMessages.modelCall(call));
              background.egress(EventMessages.egress(call, host, port));
            });
    try {
      return new LlmSession(
          provider,
          model,
          meter,
          endpoint,
          BreachNotice.create(jobDir.resolve("notice"), agentUid),
          lastFailure);
    } catch (IOException | RuntimeException e) {
      endpoint.close();
      throw e;
    }
  }

  /** The variables the agent needs to reach its model; never the key. */
  void addEnvironment(Map<String, String> env) {
    env.put("SPB_MODEL_URL", SandboxSpec.MODEL_URL);
    env.put("SPB_MODEL_PROVIDER", provider.config().provider().id());
    env.put("SPB_MODEL", model);
  }

  /** The host directory mounted read-only at {@code /work/.spb}. */
  Path noticeDir() {
    return notice.dir();
  }

  String describe() {
    return "model "
        + model
        + " of "
        + provider.config().provider().id()
        + ", budget "
        + meter.budget()
        + " tokens";
  }

  /**
   * Waits for the container to exit, warning the agent of a breach on the way. Returns the exit
   * code, or null when the container is still running and must be stopped (the wall clock ran out,
   * or the grace period after the budget was spent).
   */
  Long awaitExit(
      DockerSandbox docker, String containerId, Duration wall, Duration breachGrace, LogPump pump)
      throws InterruptedException, ExecutionException {
    long end = System.nanoTime() + wall.toNanos();
    // On a very short wall clock the agent still gets half of it before the warning.
    Duration grace = breachGrace.compareTo(wall.dividedBy(2)) < 0 ? breachGrace : wall.dividedBy(2);
    CompletableFuture<Long> exit = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                exit.complete(docker.awaitExit(containerId, wall.plusMinutes(1)));
              } catch (RuntimeException e) {
                exit.completeExceptionally(e);
              }
            },
            "spb-wait-" + containerId.substring(0, 12));
    waiter.setDaemon(true);
    waiter.start();
    CompletableFuture<Usage> spent = meter.exhaustion();
    awaitUntil(CompletableFuture.anyOf(exit, spent), end - grace.toNanos());
    if (exit.isDone()) {
      return exit.get();
    }
    boolean budget = spent.isDone();
    warn(budget ? ExitReason.BUDGET_EXCEEDED : ExitReason.TIMEOUT, grace, pump);
    awaitUntil(exit, budget ? Math.min(System.nanoTime() + grace.toNanos(), end) : end);
    return exit.isDone() ? exit.get() : null;
  }

  /** The breach the agent was warned of ({@code timeout} or {@code budget_exceeded}), or null. */
  String breach() {
    return breach;
  }

  /** Whether the runner's meter reached the budget. */
  boolean budgetExceeded() {
    return meter.exhausted();
  }

  EventPublisher.Spend spend() {
    Usage spent = meter.spent();
    return new EventPublisher.Spend(
        provider.config().provider().id(), model, spent.inputTokens(), spent.outputTokens());
  }

  /**
   * The job's detail when its agent reported a provider error (exit 76): what the runner itself saw
   * of the provider, the last failed call, since the agent's word alone proves nothing. Call after
   * {@link #close()}.
   */
  String providerErrorDetail() {
    String failure = lastFailure.get();
    return failure == null
        ? "the agent reported a model provider error, but no model call the runner saw failed"
        : "model provider error: " + failure;
  }

  String describeSpend() {
    Usage spent = meter.spent();
    return "model spend: "
        + spent.inputTokens()
        + " input + "
        + spent.outputTokens()
        + " output tokens of a "
        + "budget of "
        + meter.budget();
  }

  /** Stops the endpoint: no call is in flight or unrecorded afterwards. */
  @Override
  public void close() {
    endpoint.close();
  }

  /** Removes the notice directory, once the container is gone. */
  void deleteNotice() {
    notice.delete();
  }

  private void warn(String reason, Duration grace, LogPump pump) {
    breach = reason;
    pump.runnerLine(
        (ExitReason.BUDGET_EXCEEDED.equals(reason)
                ? "model token budget of "
                    + meter.budget()
                    + " spent ("
                    + meter.spent().total()
                    + " tokens)"
                : "wall clock limit is " + grace.toSeconds() + " s away")
            + ": breach notice "
            + reason
            + " written; stopping the container in at most "
            + grace.toSeconds()
            + " s");
    try {
      notice.write(reason);
    } catch (IOException e) {
      pump.runnerLine("cannot write the breach notice: " + e.getMessage());
    }
  }

  /**
   * Waits until the future completes or {@code untilNanos} (a {@link System#nanoTime} instant)
   * passes.
   */
  private static void awaitUntil(CompletableFuture<?> future, long untilNanos)
      throws InterruptedException {
    try {
      future.get(Math.max(0, untilNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // The caller looks at which future is done.
    }
  }
}
