package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.TaskSanitizer;
import ai.spboucher.spbgit.runner.egress.EgressPolicy;
import ai.spboucher.spbgit.runner.egress.EgressProxy;
import ai.spboucher.spbgit.runner.egress.EgressRecorder;
import ai.spboucher.spbgit.runner.git.GitRelay;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * Prepare: the size-capped work volume, the egress proxy admitting only the job's allow-list, the
 * git relay and, for a job using the model endpoint, its {@link LlmSession} (model endpoint, token
 * meter, breach notice). Runs on the job's thread; the sockets are served on Vert.x event loops.
 */
final class PreparePhase {

  private final JobContext job;

  PreparePhase(JobContext job) {
    this.job = job;
  }

  void run() throws IOException {
    job.egressDir = Files.createDirectories(job.jobDir.resolve("egress"));
    Files.setPosixFilePermissions(job.egressDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    job.mounted = job.work.mount();
    job.refusals = new RefusalNotes(job.pump);
    job.proxy =
        EgressProxy.start(
            job.vertx,
            job.egressDir.resolve("egress.sock"),
            EgressPolicy.of(allowList()),
            new EgressRecorder(job.published(EventMessages.VIA_PROXY, () -> job.phase)));
    job.git =
        GitRelay.start(
            job.vertx,
            job.egressDir.resolve(GitRelay.SOCKET_NAME),
            URI.create(job.request.getCloneUrl()),
            job.jobToken,
            job.gatewayTrust,
            job.published(EventMessages.VIA_GIT_RELAY, () -> job.phase));
    if (job.admission.model() != null) {
      job.session =
          LlmSession.open(
              job.vertx,
              job.provider,
              job.admission.model(),
              job.jobDir,
              job.egressDir,
              job.config.sandboxUid(),
              job.background);
    }
    TaskSanitizer.Sanitized task = job.admission.task();
    if (task.hiddenCharacters() + task.htmlComments() > 0) {
      job.pump.runnerLine(
          "task: removed "
              + task.hiddenCharacters()
              + " hidden characters and "
              + task.htmlComments()
              + " HTML comments before the job saw it");
    }
  }

  /**
   * The job's extra entries and the runner's own. The gateway is not on it: the job reaches its
   * repository through the git relay only.
   */
  private List<String> allowList() {
    List<String> entries = new ArrayList<>(job.request.getEgressAllowList());
    entries.addAll(job.environment().getEgressList());
    entries.addAll(job.config.egressAllow());
    return entries;
  }
}
