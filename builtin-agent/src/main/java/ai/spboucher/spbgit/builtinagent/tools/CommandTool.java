package ai.spboucher.spbgit.builtinagent.tools;

import ai.spboucher.spbgit.builtinagent.BreachSignal;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code run_command}: {@code sh -c} in the checkout, no standard input, stdout and stderr merged
 * and capped (the start and the end are kept), killed with everything it started when its timeout
 * passes, when the runner signals a breach, or when it returns (background processes do not outlive
 * a call).
 */
final class CommandTool {
  static final int DEFAULT_TIMEOUT = 60;
  static final int MAX_TIMEOUT = 120;
  static final int OUTPUT_HEAD = 4 * 1024;
  static final int OUTPUT_TAIL = 12 * 1024;
  private static final long POLL_MILLIS = 100;

  /** Variables a command must not see, should they ever reach the agent's own environment. */
  private static final List<String> WITHHELD = List.of("SPB_JOB_TOKEN", "SPB_MODEL_API_KEY");

  private final Workspace workspace;
  private final BreachSignal breach;

  CommandTool(Workspace workspace, BreachSignal breach) {
    this.workspace = workspace;
    this.breach = breach;
  }

  ToolResult run(String command, int timeoutSeconds) throws IOException {
    if (command.isBlank()) {
      return ToolResult.failed("command is empty");
    }
    if (timeoutSeconds < 1) {
      return ToolResult.failed("timeout_seconds must be at least 1");
    }
    int timeout = Math.min(timeoutSeconds, MAX_TIMEOUT);
    long started = System.nanoTime();
    Process process = start(command);
    CappedOutput output = new CappedOutput(OUTPUT_HEAD, OUTPUT_TAIL);
    Thread reader = new Thread(() -> output.drain(process.getInputStream()), "run_command-output");
    reader.setDaemon(true);
    reader.start();

    Set<ProcessHandle> family = new HashSet<>();
    String ending = awaitEnding(process, family, started, timeout);
    kill(process, family, reader);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    String status = ending != null ? ending : "exit code " + process.exitValue();
    String note = timeoutSeconds > MAX_TIMEOUT ? " (timeout capped at " + MAX_TIMEOUT + " s)" : "";
    String text = output.text();
    String content =
        status + note + " after " + millis + " ms\n" + (text.isEmpty() ? "(no output)" : text);
    String detail =
        (ending != null ? ending.substring(0, ending.indexOf(':')) : "exit " + process.exitValue())
            + ", "
            + Sizes.human(output.total())
            + " output";
    return new ToolResult(content, false, detail);
  }

  /** Starts {@code command} in the workspace, with no input and the runner's secrets withheld. */
  private Process start(String command) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder("sh", "-c", command)
            .directory(workspace.root().toFile())
            .redirectErrorStream(true)
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    Map<String, String> env = builder.environment();
    WITHHELD.forEach(env::remove);
    env.put("PAGER", "cat");
    env.put("GIT_PAGER", "cat");
    return builder.start();
  }

  /**
   * Waits for {@code process} to exit, noting its descendants in {@code family} as they appear.
   *
   * @return null when it exited within {@code timeout} seconds of {@code started} ({@link
   *     System#nanoTime}); else why it is to be stopped: the runner's breach notice, the timeout,
   *     interruption
   */
  private String awaitEnding(
      Process process, Set<ProcessHandle> family, long started, int timeout) {
    long deadline = started + TimeUnit.SECONDS.toNanos(timeout);
    try {
      while (!process.waitFor(POLL_MILLIS, TimeUnit.MILLISECONDS)) {
        process.descendants().forEach(family::add);
        Optional<String> reason = breach.reason();
        if (reason.isPresent()) {
          return "stopped: the runner signalled " + reason.get();
        }
        if (System.nanoTime() > deadline) {
          return "timed out after " + timeout + " s: killed";
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted: killed";
    }
    return null;
  }

  /** Kills the process and everything it started, and lets the reader drain what they wrote. */
  private static void kill(Process process, Set<ProcessHandle> family, Thread reader) {
    process.descendants().forEach(family::add);
    // Through the handle: Process.destroyForcibly() would also close the pipe before the reader
    // drained it.
    process.toHandle().destroyForcibly();
    family.forEach(ProcessHandle::destroyForcibly);
    try {
      process.waitFor(5, TimeUnit.SECONDS);
      // A process that escaped the kill may still hold the pipe open: do not wait for it forever.
      reader.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Keeps the first {@code head} and the last {@code tail} bytes of a stream, counting the rest.
   */
  static final class CappedOutput {
    private final int head;
    private final int tail;
    private final ByteArrayOutputStream start = new ByteArrayOutputStream();
    private final byte[] ring;
    private long total;
    private long ringWritten;

    CappedOutput(int head, int tail) {
      this.head = head;
      this.tail = tail;
      this.ring = new byte[tail];
    }

    void drain(InputStream in) {
      byte[] buffer = new byte[8192];
      try (in) {
        for (int n; (n = in.read(buffer)) > 0; ) {
          append(buffer, n);
        }
      } catch (IOException e) {
        // The stream closes when the process is killed; what was read so far is kept.
      }
    }

    synchronized void append(byte[] bytes, int length) {
      for (int i = 0; i < length; i++) {
        if (total < head) {
          start.write(bytes[i]);
        } else {
          ring[(int) (ringWritten++ % tail)] = bytes[i];
        }
        total++;
      }
    }

    synchronized long total() {
      return total;
    }

    synchronized String text() {
      String first = start.toString(StandardCharsets.UTF_8);
      if (ringWritten == 0) {
        return first;
      }
      int kept = (int) Math.min(ringWritten, tail);
      byte[] last = new byte[kept];
      for (int i = 0; i < kept; i++) {
        last[i] = ring[(int) ((ringWritten - kept + i) % tail)];
      }
      long omitted = ringWritten - kept;
      String gap = omitted > 0 ? "\n[... " + omitted + " bytes of output omitted ...]\n" : "";
      return first + gap + new String(last, StandardCharsets.UTF_8);
    }
  }
}
