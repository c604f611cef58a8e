package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** A mutable copy of a {@link Job} used by {@link Job#with}: the components events change. */
final class JobChanges {
  JobState state;
  String exitReason;
  String runnerId;
  String containerId;
  String startedAt;
  String finishedAt;
  String detail;
  List<JsonObject> refsWritten;
  long queueSequence;
  Decision decided;
  Spend spend;
  String imageDigest;
  String cache;
  String agent;
  String agentVersion;
  String revisedBy;
  JsonObject setup;
  private final Job from;

  JobChanges(Job from) {
    this.from = from;
    state = from.state();
    exitReason = from.exitReason();
    runnerId = from.runnerId();
    containerId = from.containerId();
    startedAt = from.startedAt();
    finishedAt = from.finishedAt();
    detail = from.detail();
    refsWritten = new ArrayList<>(from.refsWritten());
    queueSequence = from.queueSequence();
    decided = from.decided();
    spend = from.spend();
    imageDigest = from.imageDigest();
    cache = from.cache();
    agent = from.agent();
    agentVersion = from.agentVersion();
    revisedBy = from.revisedBy();
    setup = from.setup();
  }

  Job build() {
    return new Job(
        from.created(),
        from.createdAt(),
        state,
        exitReason,
        runnerId,
        containerId,
        startedAt,
        finishedAt,
        detail,
        refsWritten,
        queueSequence,
        decided,
        spend,
        imageDigest,
        cache,
        agent,
        agentVersion,
        revisedBy,
        setup);
  }
}
