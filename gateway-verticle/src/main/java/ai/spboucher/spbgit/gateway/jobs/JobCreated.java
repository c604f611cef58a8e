package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.proto.CodingAgent;
import io.vertx.core.json.JsonObject;

/**
 * A job was recorded, before its request is queued. {@code mode} and {@code image} are recorded for
 * the reader; the job derives them from {@code exec} and {@code environment}.
 *
 * @param agent the coding agent, null in exec mode (a job recorded before agents ran the built-in
 *     one: {@link AuditEventCodec} reads it so)
 * @param revision what the job revises, or null
 */
public record JobCreated(
    String job,
    String repo,
    String requester,
    String task,
    String exec,
    String testCommand,
    String base,
    String tokenId,
    String tokenExpires,
    String deadline,
    String baseSha,
    String mode,
    String model,
    String agent,
    String agentVersion,
    boolean execModel,
    String image,
    JsonObject environment,
    String instructionsBlob,
    String group,
    Job.Revision revision)
    implements AuditEvent {

  @Override
  public JsonObject toJson() {
    JsonObject json =
        EventFields.head(this)
            .put("repo", repo)
            .put("requester", requester)
            .put("task", task)
            .put("exec", exec)
            .put("test_command", testCommand)
            .put("base", base)
            .put("token_id", tokenId)
            .put("token_expires", tokenExpires)
            .put("deadline", deadline)
            .put("base_sha", baseSha)
            .put("mode", mode)
            .put("model", model)
            .put("agent", agent)
            .put("agent_version", agentVersion)
            .put("exec_model", execModel)
            .put("image", image)
            .put("environment", environment)
            .put("instructions_blob", instructionsBlob)
            .put("group", group);
    if (revision != null) {
      json.put("revises", revision.revises())
          .put("revises_work", revision.work())
          .put("revision", revision.number())
          .put("original_base_sha", revision.originalBaseSha())
          .put("review", revision.review());
    }
    return json;
  }

  static JobCreated from(JsonObject e) {
    String exec = e.getString("exec");
    boolean isExec = exec != null && !exec.isBlank();
    String revises = e.getString("revises");
    return new JobCreated(
        e.getString("job"),
        e.getString("repo"),
        e.getString("requester"),
        e.getString("task"),
        exec,
        e.getString("test_command"),
        e.getString("base"),
        e.getString("token_id"),
        e.getString("token_expires"),
        e.getString("deadline"),
        e.getString("base_sha"),
        e.getString("mode"),
        e.getString("model"),
        // Jobs recorded before agents ran the built-in one.
        isExec ? null : e.getString("agent", CodingAgent.BUILTIN.id()),
        e.getString("agent_version"),
        Boolean.TRUE.equals(e.getBoolean("exec_model", false)),
        e.getString("image"),
        e.getJsonObject("environment"),
        e.getString("instructions_blob"),
        e.getString("group"),
        revises == null
            ? null
            : new Job.Revision(
                revises,
                e.getString("revises_work", WorkRef.PROPOSAL.label()),
                e.getInteger("revision", 2),
                e.getString("original_base_sha"),
                e.getJsonObject("review")));
  }

  /** The job as it is once created, at {@code at}. */
  Job toJob(String at) {
    return Job.created(this, at);
  }
}
