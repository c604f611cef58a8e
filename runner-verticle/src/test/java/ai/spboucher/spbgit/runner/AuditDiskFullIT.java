package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.testsupport.Prerequisites;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's data directory (and with it the audit log) fills up: it lives on a small tmpfs of
 * its own, which the test fills to the last page. Starting a job, which must append to the audit
 * log, is refused with 507 and a JSON error and leaves no trace in the log, not even part of a
 * line; the gateway keeps serving; a running job's end is recorded exactly once, at the latest once
 * space is freed; and then jobs start and push again.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class AuditDiskFullIT {

  /**
   * Longer than a tmpfs page, so a job_created line never fits in the slack of the log's last page.
   */
  private static final String LONG_TASK = "Fill in the blanks. ".repeat(300);

  @TempDir Path tmp;
  private Path dataDir;
  private boolean mounted;
  private JobTestBed bed;

  @BeforeEach
  void start() throws Exception {
    JobTestBed.requireDocker();
    dataDir = Files.createDirectories(tmp.resolve("gateway"));
    mounted =
        run("mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", dataDir.toString()) == 0;
    if (!mounted) {
      Prerequisites.unmet("mounting a tmpfs for the gateway's data directory (root)");
    }
    bed = JobTestBed.start(tmp, "60s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    bed.startRunner(FaultChecks.uniqueRunnerId("disk"), Map.of());
  }

  @AfterEach
  void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
    if (mounted && run("umount", dataDir.toString()) != 0) {
      run("umount", "-l", dataDir.toString());
    }
  }

  @Test
  void aFullDataDirectoryAnswers507WritesNothingAndRecoversOnceSpaceIsFreed() throws Exception {
    String running = bed.submit("demo", "sleep 10", null).getString("id");
    bed.await("demo", running, "started", Duration.ofSeconds(60));
    byte[] logBefore = Files.readAllBytes(bed.auditLog());
    Path filler = fill(dataDir);

    HttpResponse<String> refused = createJob();
    assertEquals(507, refused.statusCode(), refused.body());
    assertEquals("application/json", refused.headers().firstValue("Content-Type").orElse(""));
    String error = new JsonObject(refused.body()).getString("error");
    assertTrue(error.contains("no space left") && error.contains("nothing was recorded"), error);

    // The running job ends meanwhile. Its end is recorded only if its line fits in the unused rest
    // of the log's
    // last page (tmpfs allocates whole pages); otherwise it waits in NATS and is redelivered until
    // it can be.
    assertEquals("ok", bed.awaitFinishedEvent(running, Duration.ofSeconds(60)).getExitReason());
    Thread.sleep(2_000);
    byte[] whileFull = Files.readAllBytes(bed.auditLog());
    assertArrayEquals(logBefore, Arrays.copyOf(whileFull, logBefore.length), "the log only grew");
    List<String> added =
        new String(
                whileFull,
                logBefore.length,
                whileFull.length - logBefore.length,
                StandardCharsets.UTF_8)
            .lines()
            .toList();
    assertTrue(
        added.isEmpty()
            || (added.size() == 1
                && new JsonObject(added.get(0)).getString("event").equals("job_finished")),
        "the refused job left nothing, not even part of a line: " + added);
    assertTrue(AuditLog.verify(bed.auditLog()).ok());
    assertEquals(
        200, bed.gateway.api("GET", "/healthz", null, null).statusCode(), "the gateway stays up");
    JsonArray jobs =
        new JsonArray(
            bed.gateway
                .api("GET", "/api/v1/repos/demo/agent-jobs", bed.gateway.ownerToken, null)
                .body());
    assertEquals(1, jobs.size(), "the refused job does not exist: " + jobs.encodePrettily());

    Files.delete(filler);
    JsonObject ended = bed.await("demo", running, "finished", Duration.ofSeconds(30));
    assertEquals("ok", ended.getString("exit_reason"), ended.encodePrettily());
    HttpResponse<String> created = createJob();
    assertEquals(201, created.statusCode(), created.body());
    String next = new JsonObject(created.body()).getString("id");
    JsonObject done = bed.awaitFinished("demo", next);
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
    assertTrue(done.getString("proposal_sha") != null, "the push landed on the freed disk");

    assertEquals(
        List.of("job_created", "job_dispatched", "job_started", "job_finished"),
        bed.auditEvents(running),
        "the end was recorded once");
    assertEquals(
        List.of(JobStatus.STARTED, JobStatus.FINISHED),
        bed.statusEvents(running).stream().map(e -> e.getStatus().getStatus()).toList());
    AuditChain.Result chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
    assertTrue(bed.jobContainers(running).isEmpty() && bed.jobContainers(next).isEmpty());
  }

  private HttpResponse<String> createJob() throws Exception {
    return bed.gateway.api(
        "POST",
        "/api/v1/repos/demo/agent-jobs",
        bed.gateway.ownerToken,
        new JsonObject().put("task", LONG_TASK).put("exec", "echo filled > f.txt").encode());
  }

  /** Writes a file until not one more byte fits on the file system; returns it. */
  private static Path fill(Path dir) throws IOException {
    Path filler = dir.resolve("filler");
    try (OutputStream out = Files.newOutputStream(filler)) {
      for (int chunk : new int[] {1 << 20, 4096, 1}) {
        byte[] bytes = new byte[chunk];
        try {
          while (true) {
            out.write(bytes);
            out.flush();
          }
        } catch (IOException full) {
          // Next, smaller chunks, down to the last byte of the last page.
        }
      }
    }
    assertEquals(0, Files.getFileStore(dir).getUsableSpace(), "the data directory is full");
    return filler;
  }

  private static int run(String... command) throws Exception {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    process.getInputStream().transferTo(OutputStream.nullOutputStream());
    return process.waitFor(30, TimeUnit.SECONDS) ? process.exitValue() : -1;
  }
}
