package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.RevocationList;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged {@code pre-receive} executable installed in a bare repository and driven by real
 * {@code git push} over the local transport, exactly as stock git runs it on a server.
 */
class PreReceiveHookIT {

  private static final String JOB = "job1";
  private static final String OTHER_JOB = "job2";
  private static final String REPO = "demo";
  private static final String DECLINED = "pre-receive hook declined";

  @TempDir static Path shared;

  private static TestTokens tokens;
  private static Path keyFile;
  private static Path work;
  private static TestGit git;

  @TempDir Path dir;

  private Path bare;

  @BeforeAll
  static void createKeyAndWorkRepository() throws Exception {
    tokens = new TestTokens(TestTokens.newKeyPair());
    keyFile = shared.resolve("job-token-signing.pub.pem");
    Files.writeString(keyFile, PublicKeys.toPem(tokens.publicKey()), StandardCharsets.US_ASCII);
    git = new TestGit(Files.createDirectory(shared.resolve("home")));
    work = shared.resolve("work");
    git.initWithEmptyCommit(shared, work);
    git.git(work, "tag", "v1").assertSucceeded();
  }

  @BeforeEach
  void createBareRepositoryWithHook() throws Exception {
    bare = dir.resolve(REPO + ".git");
    git.git(dir, "init", "-q", "--bare", bare.toString()).assertSucceeded();
    Path hookFile = bare.resolve("hooks/pre-receive");
    Files.copy(Path.of(System.getProperty("spb.hook.executable")), hookFile);
    Files.setPosixFilePermissions(hookFile, PosixFilePermissions.fromString("rwxr-xr-x"));
    git.git(bare, "config", "spbgit.jobTokenPublicKey", keyFile.toString()).assertSucceeded();
  }

  @Test
  void admitsPushInsideTheJobNamespace() throws Exception {
    TestGit.Result push = push(validToken(JOB), "HEAD:refs/agents/job1/proposal");

    assertEquals(0, push.exitCode(), push.output());
    assertEquals(head(), git.git(bare, "rev-parse", "refs/agents/job1/proposal").output().strip());
  }

  @Test
  void refusesPushToMain() throws Exception {
    assertRefused(
        validToken(JOB),
        "refused refs/heads/main: outside the job's scope",
        "HEAD:refs/heads/main");
  }

  @Test
  void refusesPushOfATag() throws Exception {
    assertRefused(validToken(JOB), "refused refs/tags/v1: outside the job's scope", "refs/tags/v1");
  }

  @Test
  void refusesPushIntoAnotherJobsNamespace() throws Exception {
    assertRefused(
        validToken(JOB),
        "refused refs/agents/job2/x: outside the job's scope",
        "HEAD:refs/agents/job2/x");
  }

  @Test
  void refusesPushIntoANamespaceSharingTheJobPrefix() throws Exception {
    assertRefused(
        validToken(JOB),
        "refused refs/agents/job1x/y: outside the job's scope",
        "HEAD:refs/agents/job1x/y");
  }

  @Test
  void refusesWholePushMixingAnAllowedAndARefusedRef() throws Exception {
    TestGit.Result push =
        assertRefused(
            validToken(JOB),
            "refused refs/heads/main: outside the job's scope",
            "HEAD:refs/agents/job1/ok",
            "HEAD:refs/heads/main");

    assertTrue(
        push.output()
            .contains(
                "remote: refused refs/agents/job1/ok: atomic push refused because refs/heads/main"),
        push.output());
  }

  @Test
  void refusesPushWithoutToken() throws Exception {
    assertRefused(
        null, "push refused: no job token in GIT_AUTH_TOKEN", "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void refusesExpiredToken() throws Exception {
    String expired =
        tokens.mint(JOB, REPO, Instant.now().minus(Duration.ofMinutes(90)), Duration.ofHours(1));

    assertRefused(expired, "push refused: job token has expired", "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void refusesRevokedToken() throws Exception {
    String token = validToken(JOB);
    Path revocations = dir.resolve("revoked-job-tokens.json");
    RevocationList.load(revocations, Clock.systemUTC())
        .revoke(
            TestTokens.payloadOf(token).get("jti").textValue(),
            Instant.now().plus(Duration.ofHours(1)));
    git.git(bare, "config", "spbgit.revokedJobTokens", revocations.toString()).assertSucceeded();

    assertRefused(
        token, "push refused: job token has been revoked", "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void refusesTokenForAnotherRepository() throws Exception {
    String token = tokens.mint(JOB, "other", Instant.now(), Duration.ofMinutes(10));

    assertRefused(
        token,
        "job token is scoped to repository other, not demo",
        "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void refusesTamperedToken() throws Exception {
    String token = validToken(OTHER_JOB);
    String[] parts = token.split("\\.");
    var payload = TestTokens.payloadOf(token).put("sub", JOB);
    payload.putObject("scope").put("repo", REPO).put("refs", "refs/agents/job1/*");
    String tampered = parts[0] + "." + TestTokens.encode(payload) + "." + parts[2];

    assertRefused(
        tampered, "push refused: job token signature is invalid", "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void refusesTokenSignedByAnotherKeyEvenIfTheEnvironmentNamesThatKey() throws Exception {
    TestTokens attacker = new TestTokens(TestTokens.newKeyPair());
    Path attackerKey = dir.resolve("attacker.pem");
    Files.writeString(
        attackerKey, PublicKeys.toPem(attacker.publicKey()), StandardCharsets.US_ASCII);
    String token = attacker.mint(JOB, REPO, Instant.now(), Duration.ofMinutes(10));

    assertRefused(
        token,
        "push refused: job token signed with an unknown key",
        Map.of("SPB_JOB_TOKEN_PUBLIC_KEY", attackerKey.toString()),
        "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void refusesEveryPushWhenNoKeyIsConfigured() throws Exception {
    git.git(bare, "config", "--unset", "spbgit.jobTokenPublicKey").assertSucceeded();

    assertRefused(
        validToken(JOB),
        "push refused: spbgit.jobTokenPublicKey is not configured",
        "HEAD:refs/agents/job1/proposal");
  }

  @Test
  void exitsWithDocumentedCodes() throws Exception {
    String update = "0".repeat(40) + " " + head() + " ";
    Path hookFile = bare.resolve("hooks/pre-receive");
    // Run by hand, the hook finds the commit only in the repository itself (git push would have put
    // it there).
    git.git(bare, "fetch", "-q", work.toString(), "main:refs/heads/main").assertSucceeded();

    assertEquals(
        0, runHook(hookFile, validToken(JOB), update + "refs/agents/job1/proposal").exitCode());
    assertEquals(1, runHook(hookFile, validToken(JOB), update + "refs/heads/main").exitCode());
    assertEquals(1, runHook(hookFile, null, update + "refs/agents/job1/proposal").exitCode());
    git.git(bare, "config", "spbgit.jobTokenPublicKey", dir.resolve("missing.pem").toString())
        .assertSucceeded();
    assertEquals(
        2, runHook(hookFile, validToken(JOB), update + "refs/agents/job1/proposal").exitCode());
  }

  @Test
  void refusesAJobRefPointingAtABlob() throws Exception {
    String blob = blob("not a commit\n");

    assertRefused(
        validToken(JOB),
        "refused refs/agents/job1/proposal: pointed at a blob; job refs may only point "
            + "at commits",
        blob + ":refs/agents/job1/proposal");
  }

  @Test
  void refusesAJobRefPointingAtAnAnnotatedTagOfACommitOrOfABlob() throws Exception {
    git.asTester(work, "tag", "-f", "-a", "-m", "tag", "annotated").assertSucceeded();
    git.asTester(work, "tag", "-f", "-a", "-m", "tag", "blob-tag", blob("tagged blob\n"))
        .assertSucceeded();

    for (String tag : List.of("refs/tags/annotated", "refs/tags/blob-tag")) {
      assertRefused(
          validToken(JOB),
          "refused refs/agents/job1/proposal: pointed at an annotated tag; job refs may "
              + "only point at commits",
          tag + ":refs/agents/job1/proposal");
    }
  }

  @Test
  void refusesRefsOverTheJobsLimitCountingTheRefsItAlreadyHas() throws Exception {
    List<String> first = new ArrayList<>();
    for (int i = 0; i < PushGate.MAX_REFS_PER_JOB; i++) {
      first.add("HEAD:refs/agents/job1/r" + i);
    }
    push(validToken(JOB), first.toArray(String[]::new)).assertSucceeded();

    assertRefused(
        validToken(JOB),
        "refused refs/agents/job1/one-more: over the limit of 32 refs per job",
        "HEAD:refs/agents/job1/one-more");
    String next =
        git.asTester(work, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "next")
            .assertSucceeded()
            .output()
            .strip();
    TestGit.Result update = push(validToken(JOB), next + ":refs/agents/job1/r0");
    assertEquals(
        0, update.exitCode(), "updating a ref the job has is still admitted: " + update.output());
  }

  @Test
  void refusesAPushOfManyRefsAtOnce() throws Exception {
    List<String> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add("HEAD:refs/agents/job1/flood-" + i);
    }

    assertRefused(
        validToken(JOB),
        "refused refs/agents/job1/flood-32: over the limit of 32 refs per job",
        many.toArray(String[]::new));
  }

  @Test
  void refusesRefNamesOverTheLengthLimit() throws Exception {
    String ref = "refs/agents/job1/" + "x".repeat(800);

    assertRefused(
        validToken(JOB),
        "refused " + ref + ": ref name is 817 characters long; job refs may have at most " + "200",
        "HEAD:" + ref);
  }

  private static String blob(String content) throws Exception {
    Path file = Files.writeString(shared.resolve("blob-" + content.hashCode()), content);
    return git.git(work, "hash-object", "-w", file.toString()).assertSucceeded().output().strip();
  }

  private TestGit.Result assertRefused(String token, String reason, String... refspecs)
      throws Exception {
    return assertRefused(token, reason, Map.of(), refspecs);
  }

  private TestGit.Result assertRefused(
      String token, String reason, Map<String, String> extraEnv, String... refspecs)
      throws Exception {
    String before = refs();
    TestGit.Result push = push(token, extraEnv, refspecs);

    assertNotEquals(0, push.exitCode(), push.output());
    assertTrue(push.output().contains(DECLINED), push.output());
    assertTrue(
        push.output()
            .lines()
            .anyMatch(line -> line.startsWith("remote: ") && line.contains(reason)),
        () -> "expected a remote: line naming '" + reason + "' in:\n" + push.output());
    assertEquals(before, refs(), "the refused push changed refs");
    return push;
  }

  private TestGit.Result push(String token, String... refspecs) throws Exception {
    return push(token, Map.of(), refspecs);
  }

  private TestGit.Result push(String token, Map<String, String> extraEnv, String... refspecs)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("push", bare.toString()));
    args.addAll(Arrays.asList(refspecs));
    Map<String, String> env = new HashMap<>(extraEnv);
    if (token != null) {
      env.put("GIT_AUTH_TOKEN", token);
    }
    return git.git(work, env, args.toArray(String[]::new));
  }

  private static TestGit.Result runHook(Path hookFile, String token, String stdin)
      throws Exception {
    Map<String, String> env = token == null ? Map.of() : Map.of("GIT_AUTH_TOKEN", token);
    return git.run(hookFile.getParent().getParent(), env, stdin + "\n", hookFile.toString());
  }

  private String refs() throws Exception {
    TestGit.Result refs = git.git(bare, "for-each-ref", "--format=%(refname) %(objectname)");
    refs.assertSucceeded();
    return refs.output();
  }

  private static String head() throws Exception {
    return git.git(work, "rev-parse", "HEAD").output().strip();
  }

  private static String validToken(String job) {
    return tokens.mint(job, REPO, Instant.now().minusSeconds(5), Duration.ofMinutes(10));
  }
}
