package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Revising a finished job: a new job on the job's proposal (or, without one, its partial work,
 * which is how partial work is continued), with the same agent, model and test command, in the
 * repository's environment as every job gets it (the default branch's file now: an allow-list the
 * owner tightened since the revised job ran is the one the revision gets), whose task is the job's
 * task followed by the owner's review ({@link RevisionTask}). An exec-mode job is revised with a
 * new command (and, optionally, test command). The revision is linked both ways: its {@code
 * job_created} names what it revises, and the revised job gets {@code job_revised}.
 *
 * <p>Threading: call on the gateway's context, as the {@link JobLedger}; the work to revise is read
 * on a worker thread.
 */
public final class JobRevisions {

  private final Vertx vertx;
  private final JobLedger ledger;
  private final Proposals proposals;
  private final JobCreation creation;

  /** Revisions being created, by the id of the job they revise; on the context. */
  private final Set<String> revising = new HashSet<>();

  JobRevisions(Vertx vertx, JobLedger ledger, Proposals proposals, JobCreation creation) {
    this.vertx = vertx;
    this.ledger = ledger;
    this.proposals = proposals;
    this.creation = creation;
  }

  /**
   * Starts a revision of {@code previous} with the owner's review.
   *
   * <p>Refused (409) while the job runs, while a revision of it runs or is being created, and once
   * a revision of it has work of its own (revise that one, the chain's latest); a revision that
   * ended without any work can be replaced by revising the job again.
   */
  public Future<Job> revise(Job previous, NewRevision request, Principal.Owner owner) {
    Job latest =
        previous.revisedBy() == null ? null : ledger.get(previous.revisedBy()).orElse(null);
    Optional<RuntimeException> refusal = refusal(previous, request, latest);
    if (refusal.isPresent()) {
      return Future.failedFuture(refusal.get());
    }
    if (!revising.add(previous.id())) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "a revision of job " + previous.id() + " is being created"));
    }
    RepoName repo = RepoName.of(previous.repo());
    return vertx
        .executeBlocking(() -> workToRevise(repo, previous, latest), false)
        .compose(work -> create(repo, previous, request, work, owner))
        .andThen(done -> revising.remove(previous.id()));
  }

  /** Why {@code previous} cannot be revised as {@code request} asks now, if it cannot. */
  private static Optional<RuntimeException> refusal(Job previous, NewRevision request, Job latest) {
    if (!previous.isFinished()) {
      return Optional.of(
          new RequestException.Conflict(
              "job "
                  + previous.id()
                  + " has not finished (it is "
                  + previous.status()
                  + "): revise it once it has, or cancel it first"));
    }
    if (previous.isExec() && !request.isExec()) {
      return Optional.of(
          new RequestException.Invalid(
              "job "
                  + previous.id()
                  + " is an exec job: revise it with a new 'exec' command (and optionally"
                  + " 'test_command')"));
    }
    if (!previous.isExec() && (request.isExec() || !request.testCommand().isEmpty())) {
      return Optional.of(
          new RequestException.Invalid(
              "job "
                  + previous.id()
                  + " is an llm job: 'exec' and 'test_command' revise exec jobs only"));
    }
    if (latest != null && !latest.isFinished()) {
      return Optional.of(
          new RequestException.Conflict(
              "job "
                  + previous.id()
                  + " is being revised by job "
                  + latest.id()
                  + ", which has not finished"));
    }
    return Optional.empty();
  }

  /** Creates the revision of {@code previous} that continues {@code work}. */
  private Future<Job> create(
      RepoName repo, Job previous, NewRevision request, Work work, Principal.Owner owner) {
    List<JsonObject> comments = commentsToAddress(previous, request, work.sha());
    if (!previous.isExec() && request.text().isBlank() && comments.isEmpty()) {
      throw new RequestException.Invalid(
          "nothing to revise: give a 'task' (what to change) or review 'comments' to"
              + " address ("
              + (request.comments() == null
                  ? "job " + previous.id() + " has none on its " + work.which().noun()
                  : "none were named")
              + ")");
    }
    int number = previous.revision() == null ? 2 : previous.revision().number() + 1;
    String task =
        RevisionTask.compose(
            previous.task(), number, work.which().label(), work.sha(), request.text(), comments);
    NewJob asJob =
        new NewJob(
            task,
            request.exec(),
            nullToEmpty(previous.model()),
            request.testCommand().isEmpty()
                ? nullToEmpty(previous.testCommand())
                : request.testCommand(),
            previous.baseRef(),
            previous.isExec() ? "" : nullToEmpty(previous.agent()));
    JsonObject review =
        new JsonObject()
            .put("text", request.text())
            .put("comments", new JsonArray(comments.stream().map(c -> c.getLong("id")).toList()));
    Job.Revision revision =
        new Job.Revision(
            previous.id(), work.which().label(), number, previous.originalBaseSha(), review);
    return creation.create(
        repo, asJob, owner, null, new JobCreation.Revising(revision, work.sha()));
  }

  private static String nullToEmpty(String value) {
    return value == null ? "" : value;
  }

  /** The work a revision continues: which ref and the commit it points at. */
  private record Work(WorkRef which, String sha) {}

  /**
   * Blocking: the revised job's proposal, or else its partial work; refused when it has neither, or
   * when {@code latest} (the job's current revision) has work of its own.
   */
  private Work workToRevise(RepoName repo, Job previous, Job latest) throws IOException {
    List<Job> jobs = latest == null ? List.of(previous) : List.of(previous, latest);
    Map<String, WorkShas> shas = proposals.workShas(repo, jobs);
    if (latest != null && shas.containsKey(latest.id())) {
      throw new RequestException.Conflict(
          "job "
              + previous.id()
              + " was revised by job "
              + latest.id()
              + ": revise that one, the latest revision");
    }
    WorkShas work = shas.getOrDefault(previous.id(), WorkShas.NONE);
    if (work.proposal() != null) {
      return new Work(WorkRef.PROPOSAL, work.proposal());
    }
    if (work.partial() != null) {
      return new Work(WorkRef.PARTIAL, work.partial());
    }
    throw new RequestException.Conflict(
        "job " + previous.id() + " left no proposal or partial work to revise");
  }

  /**
   * The comments the revision addresses: those named (each must be the job's), or without names
   * every comment on the work being revised.
   */
  private List<JsonObject> commentsToAddress(Job previous, NewRevision request, String sha) {
    List<JsonObject> all = ledger.comments(previous.id());
    if (request.comments() == null) {
      return all.stream().filter(c -> sha.equals(c.getString("commit"))).toList();
    }
    Map<Long, JsonObject> byId = new HashMap<>();
    all.forEach(c -> byId.put(c.getLong("id"), c));
    List<JsonObject> named = new ArrayList<>();
    for (Long id : new LinkedHashSet<>(request.comments())) {
      JsonObject comment = byId.get(id);
      if (comment == null) {
        throw new RequestException.Invalid("job " + previous.id() + " has no review comment " + id);
      }
      named.add(comment);
    }
    return named;
  }
}
