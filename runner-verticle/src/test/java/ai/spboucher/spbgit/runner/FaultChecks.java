package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.gateway.jobs.AuditLog;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

/**
 * What every fault test checks once the dust has settled: each numbered output line reached the gateway exactly
 * once and in order, the audit log holds each of the job's events once and its chain verifies, and no container
 * of the job is left.
 */
final class FaultChecks {

  private FaultChecks() {
  }

  /**
   * A job command printing {@code prefix1} to {@code prefixN}, {@code perPause} lines at a time with
   * {@code pauseSeconds} between the bursts (the pause is the only process it forks).
   */
  static String numberedLines(String prefix, int count, int perPause, String pauseSeconds) {
    return "i=0; while [ $i -lt " + count + " ]; do i=$((i+1)); echo " + prefix + "$i; "
        + "if [ $((i % " + perPause + ")) -eq 0 ]; then sleep " + pauseSeconds + "; fi; done";
  }

  /** Asserts that the lines of {@code text} starting with {@code prefix} are exactly prefix1..prefixN, in order. */
  static void assertEachLineOnce(String text, String prefix, int count, String where) {
    List<String> lines = text.lines().filter(l -> l.startsWith(prefix)).toList();
    for (int i = 0; i < Math.min(lines.size(), count); i++) {
      if (!lines.get(i).equals(prefix + (i + 1))) {
        fail(where + ": line " + (i + 1) + " is '" + lines.get(i) + "', expected '" + prefix + (i + 1)
            + "' (a line lost or repeated)");
      }
    }
    assertEquals(count, lines.size(), where + ": numbered lines");
  }

  /**
   * The job's log as the gateway serves it ({@code GET .../log}), once it answers: right after a NATS restart it
   * can still be reconnecting.
   */
  static String gatewayLog(JobTestBed bed, String repo, String id) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    HttpResponse<String> r = null;
    while (System.nanoTime() < deadline) {
      r = bed.gateway.api("GET", "/api/v1/repos/" + repo + "/agent-jobs/" + id + "/log", bed.gateway.ownerToken,
          null);
      if (r.statusCode() == 200 && !r.body().isEmpty()) {
        return r.body();
      }
      Thread.sleep(250);
    }
    return fail("the gateway served no log for job " + id + ": " + (r == null ? "" : r.statusCode() + " " + r.body()));
  }

  /**
   * Asserts the job's numbered lines reached the gateway once each, both in the log API and in the raw stream
   * (whose sequence {@link JobTestBed#log} checks for gaps), and that the two agree.
   */
  static void assertLogComplete(JobTestBed bed, String repo, String id, String prefix, int count) throws Exception {
    String published = bed.log(id);
    assertEachLineOnce(published, prefix, count, "the log events of job " + id);
    String served = gatewayLog(bed, repo, id);
    assertEachLineOnce(served, prefix, count, "the gateway's log of job " + id);
    assertEquals(published, served, "the gateway serves the log events as published");
  }

  /** Asserts the job's audit events are exactly {@code expected} and the whole audit chain verifies. */
  static void assertAudited(JobTestBed bed, String id, List<String> expected) throws Exception {
    assertEquals(expected, bed.auditEvents(id), "audit events of job " + id);
    AuditLog.VerifyResult chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }

  /** Asserts no container of the job exists, waiting a little for the runner's clean-up after FINISHED. */
  static void assertNoContainerLeft(JobTestBed bed, String id) throws Exception {
    JobTestBed.awaitCondition("no container of job " + id + " is left", Duration.ofSeconds(20),
        () -> bed.jobContainers(id).isEmpty());
  }
}
