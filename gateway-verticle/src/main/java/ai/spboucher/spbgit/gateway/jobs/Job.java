package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * A job as the audit log says it is: an immutable snapshot, replaced as entries are applied.
 *
 * @param status one of {@code queued}, {@code dispatched}, {@code started}, {@code finished}
 */
public record Job(String id, String repo, String task, String execCommand, String testCommand, String baseRef,
                  String requesterTokenId, String tokenId, String tokenExpires, String deadline, String status,
                  String exitReason, String runnerId, String containerId, String createdAt, String startedAt,
                  String finishedAt, String detail, List<JsonObject> refsWritten, long queueSequence) {

  public static final String QUEUED = "queued";
  public static final String DISPATCHED = "dispatched";
  public static final String STARTED = "started";
  public static final String FINISHED = "finished";

  public Job {
    refsWritten = List.copyOf(refsWritten);
  }

  public boolean isFinished() {
    return FINISHED.equals(status);
  }

  Job withStatus(String newStatus) {
    return new Job(id, repo, task, execCommand, testCommand, baseRef, requesterTokenId, tokenId, tokenExpires,
        deadline, newStatus, exitReason, runnerId, containerId, createdAt, startedAt, finishedAt, detail,
        refsWritten, queueSequence);
  }

  Job dispatched(long sequence) {
    return new Job(id, repo, task, execCommand, testCommand, baseRef, requesterTokenId, tokenId, tokenExpires,
        deadline, DISPATCHED, exitReason, runnerId, containerId, createdAt, startedAt, finishedAt, detail,
        refsWritten, sequence);
  }

  Job started(String runner, String container, String at) {
    return new Job(id, repo, task, execCommand, testCommand, baseRef, requesterTokenId, tokenId, tokenExpires,
        deadline, STARTED, exitReason, runner, container, createdAt, at, finishedAt, detail, refsWritten,
        queueSequence);
  }

  Job finished(String reason, String runner, String container, String at, String why) {
    return new Job(id, repo, task, execCommand, testCommand, baseRef, requesterTokenId, tokenId, tokenExpires,
        deadline, FINISHED, reason, runner == null || runner.isEmpty() ? runnerId : runner,
        container == null || container.isEmpty() ? containerId : container, createdAt, startedAt, at, why,
        refsWritten, queueSequence);
  }

  Job withRefs(List<JsonObject> refs) {
    List<JsonObject> all = new java.util.ArrayList<>(refsWritten);
    all.addAll(refs);
    return new Job(id, repo, task, execCommand, testCommand, baseRef, requesterTokenId, tokenId, tokenExpires,
        deadline, status, exitReason, runnerId, containerId, createdAt, startedAt, finishedAt, detail, all,
        queueSequence);
  }

  /** The API form. */
  public JsonObject toJson() {
    return new JsonObject()
        .put("id", id).put("repo", repo).put("task", task).put("exec", execCommand)
        .put("test_command", testCommand).put("base", baseRef).put("status", status)
        .put("exit_reason", exitReason).put("runner_id", runnerId).put("container_id", containerId)
        .put("created_at", createdAt).put("started_at", startedAt).put("finished_at", finishedAt)
        .put("detail", detail).put("deadline", deadline)
        .put("refs_written", new JsonArray(refsWritten));
  }
}
