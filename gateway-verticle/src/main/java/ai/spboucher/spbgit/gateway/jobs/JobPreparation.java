package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.environment.AgentEnvironment;
import ai.spboucher.spbgit.gateway.environment.CacheKeyFiles;
import ai.spboucher.spbgit.gateway.environment.EnvironmentReading;
import ai.spboucher.spbgit.gateway.environment.RepositoryInstructions;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.hooks.JobTokenSigner;
import ai.spboucher.spbgit.proto.CodingAgent;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.eclipse.jgit.lib.ObjectId;

/**
 * What a new job needs before anything about it is recorded: its id, deadline and signed token, the
 * commit it starts on, the environment and instructions of the default branch, and the digest of
 * the environment's cache key files.
 *
 * <p>Threading: {@link #prepare} blocks (JGit, signing); call it on a worker thread. It keeps no
 * state between calls.
 */
record JobPreparation(
    RepositoryStore repos, Proposals proposals, JobTokens tokens, Duration wallLimit, Clock clock) {

  /** How long a job may wait in the queue on top of its wall-clock limit before it is given up. */
  static final Duration QUEUE_ALLOWANCE = Duration.ofMinutes(10);

  /**
   * A new job's id, deadline, signed token, base commit, environment and instructions (both from
   * the default branch), before anything is recorded, with the digest of the environment's cache
   * key files at the base commit ("" when there is no setup or it cannot be read exactly: {@link
   * CacheKeyFiles}).
   */
  record Prepared(
      String id,
      Instant deadline,
      JobTokenSigner.Issued token,
      String baseSha,
      AgentEnvironment environment,
      RepositoryInstructions instructions,
      String cacheKeyFilesDigest) {

    /**
     * The job's {@code job_created} event. The request's test command wins over the environment's
     * default ({@code test} in the file). An llm job's agent is recorded with the version the
     * images pin (null for the built-in agent, whose version is the runner's agent jar: {@code
     * job_started} says which).
     */
    JobCreated createdEvent(
        RepoName repo,
        NewJob request,
        String model,
        Optional<CodingAgent> agent,
        Principal.Owner owner,
        String group,
        Job.Revision revision) {
      String testCommand =
          request.testCommand().isEmpty() ? environment.test() : request.testCommand();
      return new JobCreated(
          id,
          repo.value(),
          owner.tokenId(),
          request.task(),
          request.exec(),
          testCommand,
          request.baseBranch(),
          token.tokenId(),
          token.expiresAt().toString(),
          deadline.toString(),
          baseSha,
          request.isExec() ? "exec" : "llm",
          model,
          agent.map(CodingAgent::id).orElse(null),
          agent.map(CodingAgent::pinnedVersion).filter(v -> !v.isEmpty()).orElse(null),
          request.isExec() && model != null,
          environment.image(),
          environment.toJson().put("blob", environment.blob()),
          instructions.blob(),
          group,
          revision);
    }
  }

  /**
   * Blocking: reads the base branch, the environment file of the default branch, the cache key
   * files at the base commit and, for a job of the built-in agent, its {@code AGENTS.md}, and signs
   * the job's token. A revision starts on the work it revises; its base branch must still exist
   * (the job clones it).
   *
   * @throws ai.spboucher.spbgit.gateway.environment.EnvironmentFileException when the file cannot
   *     be used
   * @throws ai.spboucher.spbgit.gateway.environment.InstructionsFileException when {@code
   *     AGENTS.md} cannot be given to the agent
   */
  Prepared prepare(RepoName repo, String baseRef, boolean builtin, JobCreation.Revising revision)
      throws IOException {
    String branchSha = requireBranch(repo, baseRef);
    String baseSha = revision == null ? branchSha : revision.baseSha();
    // Setup runs, and the cache is keyed, on owner-trusted content only: a revision's on its
    // chain's original base, never on the agent-written work it revises.
    String setupSha = revision == null ? branchSha : revision.revision().originalBaseSha();
    AgentEnvironment environment;
    RepositoryInstructions instructions = RepositoryInstructions.NONE;
    String cacheKeyFilesDigest = "";
    try (var repository = repos.open(repo)) {
      environment = EnvironmentReading.of(repository).require();
      if (builtin) {
        instructions = RepositoryInstructions.of(repository);
      }
      // Only a setup phase is cached; with the digest a runner's cache hit needs no clone
      // container.
      if (!environment.setup().isEmpty() && !environment.cache().isEmpty()) {
        cacheKeyFilesDigest =
            CacheKeyFiles.digest(
                    repository, ObjectId.fromString(setupSha), environment.cacheKeyFiles())
                .orElse("");
      }
    }
    String id = JobIds.next(clock);
    Instant deadline = clock.instant().plus(wallLimit).plus(QUEUE_ALLOWANCE);
    JobTokenSigner.Issued token =
        tokens.issueToken(
            id, repo.value(), Duration.between(clock.instant(), deadline).plusMinutes(2));
    return new Prepared(
        id, deadline, token, baseSha, environment, instructions, cacheKeyFilesDigest);
  }

  private String requireBranch(RepoName repo, String base) throws IOException {
    String sha = proposals.branchSha(repo, base);
    if (sha == null) {
      throw new RequestException.Conflict(
          "repository " + repo + " has no branch '" + base + "' to start from");
    }
    return sha;
  }
}
