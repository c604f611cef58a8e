package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.RevocationList;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.lib.StoredConfig;
import org.eclipse.jgit.lib.TreeFormatter;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stand-alone hook's decision logic, run in-process against a real bare repository on disk. */
class PreReceiveMainTest {

  private static final String ZERO = "0".repeat(40);
  private static final String JOB = "job1";

  @TempDir Path dir;

  private final TestTokens tokens = new TestTokens(TestTokens.newKeyPair());
  private final Map<String, String> env = new HashMap<>();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private File gitDir;

  /**
   * A commit in the repository, for the updates to point at: the gate admits job refs only at
   * commits.
   */
  private String commit;

  private Path keyFile;

  @BeforeEach
  void createRepository() throws IOException {
    gitDir = dir.resolve("demo.git").toFile();
    try (Repository repo = new FileRepositoryBuilder().setGitDir(gitDir).setBare().build()) {
      repo.create(true);
      try (ObjectInserter inserter = repo.newObjectInserter()) {
        CommitBuilder builder = new CommitBuilder();
        builder.setTreeId(inserter.insert(new TreeFormatter()));
        PersonIdent someone = new PersonIdent("Test", "test@example.invalid");
        builder.setAuthor(someone);
        builder.setCommitter(someone);
        builder.setMessage("initial");
        commit = inserter.insert(builder).name();
        inserter.flush();
      }
    }
    keyFile = dir.resolve("job-token-signing.pub.pem");
    Files.writeString(keyFile, PublicKeys.toPem(tokens.publicKey()), StandardCharsets.US_ASCII);
    setConfig("jobTokenPublicKey", keyFile.toString());
  }

  @Test
  void admitsRefsInsideTheJobScope() {
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(0, run(update("refs/agents/job1/proposal"), update("refs/agents/job1/x/y")));
    assertEquals("", output());
  }

  @Test
  void refusesWholePushWhenOneRefIsOutsideTheScope() {
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(
        PreReceiveMain.REFUSED, run(update("refs/agents/job1/ok"), update("refs/heads/main")));
    assertTrue(output().contains("refused refs/heads/main: outside the job's scope"), output());
    assertTrue(
        output()
            .contains("refused refs/agents/job1/ok: atomic push refused because refs/heads/main"),
        output());
  }

  @Test
  void refusesPushWithoutToken() {
    assertEquals(PreReceiveMain.REFUSED, run(update("refs/agents/job1/ok")));
    assertTrue(output().contains("no job token in GIT_AUTH_TOKEN"), output());
  }

  @Test
  void admitsPushWithoutTokenOnlyWhenConfiguredTo() throws IOException {
    setConfig("allowPushWithoutJobToken", "true");

    assertEquals(0, run(update("refs/heads/main")));
  }

  @Test
  void allowPushWithoutJobTokenIsNotReadFromTheEnvironment() {
    env.put("SPBGIT_ALLOW_PUSH_WITHOUT_JOB_TOKEN", "true");
    env.put("GIT_CONFIG_PARAMETERS", "'spbgit.allowpushwithoutjobtoken'='true'");

    assertEquals(PreReceiveMain.REFUSED, run(update("refs/heads/main")));
  }

  @Test
  void refusesAsMisconfiguredWithoutAKey() throws IOException {
    unsetConfig("jobTokenPublicKey");
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(PreReceiveMain.MISCONFIGURED, run(update("refs/agents/job1/ok")));
    assertTrue(output().contains("spbgit.jobTokenPublicKey is not configured"), output());
  }

  @Test
  void refusesAsMisconfiguredWhenTheKeyFileIsMissingOrCorrupt() throws IOException {
    env.put("GIT_AUTH_TOKEN", validToken());
    for (String pem :
        List.of(
            "not a key",
            "-----BEGIN PUBLIC KEY-----\n!!!\n-----END PUBLIC KEY-----\n",
            "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")) {
      Files.writeString(keyFile, pem, StandardCharsets.US_ASCII);
      err.reset();
      assertEquals(PreReceiveMain.MISCONFIGURED, run(update("refs/agents/job1/ok")), pem);
      assertTrue(output().contains("cannot load the job token key"), output());
    }
    Files.delete(keyFile);
    assertEquals(PreReceiveMain.MISCONFIGURED, run(update("refs/agents/job1/ok")));
  }

  @Test
  void fallsBackToTheEnvironmentForTheKey() throws IOException {
    unsetConfig("jobTokenPublicKey");
    env.put("SPB_JOB_TOKEN_PUBLIC_KEY", keyFile.toString());
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(0, run(update("refs/agents/job1/ok")), this::output);
  }

  @Test
  void gitConfigWinsOverTheEnvironmentForTheKey() throws IOException {
    TestTokens attacker = new TestTokens(TestTokens.newKeyPair());
    Path attackerKey = dir.resolve("attacker.pem");
    Files.writeString(
        attackerKey, PublicKeys.toPem(attacker.publicKey()), StandardCharsets.US_ASCII);
    env.put("SPB_JOB_TOKEN_PUBLIC_KEY", attackerKey.toString());
    env.put("GIT_AUTH_TOKEN", attacker.mint(JOB, "demo", Instant.now(), Duration.ofMinutes(10)));

    assertEquals(PreReceiveMain.REFUSED, run(update("refs/agents/job1/ok")));
    assertTrue(output().contains("unknown key"), output());
  }

  @Test
  void refusesRevokedToken() throws IOException {
    String token = validToken();
    Path revocations = dir.resolve("revoked-job-tokens.json");
    RevocationList.load(revocations, Clock.systemUTC())
        .revoke(
            TestTokens.payloadOf(token).get("jti").textValue(),
            Instant.now().plus(Duration.ofHours(1)));
    setConfig("revokedJobTokens", revocations.toString());
    env.put("GIT_AUTH_TOKEN", token);

    assertEquals(PreReceiveMain.REFUSED, run(update("refs/agents/job1/ok")));
    assertTrue(output().contains("push refused: job token has been revoked"), output());
  }

  @Test
  void refusesAsMisconfiguredWhenTheRevocationListIsCorrupt() throws IOException {
    Path revocations = dir.resolve("revoked-job-tokens.json");
    Files.writeString(revocations, "{\"revoked\": [{}]}", StandardCharsets.UTF_8);
    setConfig("revokedJobTokens", revocations.toString());
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(PreReceiveMain.MISCONFIGURED, run(update("refs/agents/job1/ok")));
  }

  @Test
  void derivesTheRepositoryNameFromTheDirectoryUnlessConfigured() throws IOException {
    env.put("GIT_AUTH_TOKEN", tokens.mint(JOB, "published", Instant.now(), Duration.ofMinutes(10)));

    assertEquals(PreReceiveMain.REFUSED, run(update("refs/agents/job1/ok")));
    assertTrue(
        output().contains("job token is scoped to repository published, not demo"), output());

    setConfig("repoName", "published");
    assertEquals(0, run(update("refs/agents/job1/ok")));
  }

  @Test
  void refusesMalformedInput() {
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(PreReceiveMain.REFUSED, run("refs/agents/job1/ok"));
    assertTrue(output().contains("malformed pre-receive input line"), output());
  }

  @Test
  void escapesControlCharactersInEveryLineItPrints() {
    env.put("GIT_AUTH_TOKEN", validToken());

    assertEquals(
        PreReceiveMain.REFUSED,
        run(update("refs/agents/job1/ok"), update("refs/agents/job1/\u001b[2J\rremote: forged")));
    String output = output();
    assertTrue(output.contains("\\x1b[2J\\x0dremote: forged"), output);
    assertTrue(output.chars().allMatch(c -> c == '\n' || (c >= 0x20 && c != 0x7f)), output);
  }

  @Test
  void printableEscapesOnlyControlCharacters() {
    assertEquals("a\\x0ab\\x09c\\x7fé", PreReceiveMain.printable("a\nb\tc\u007fé"));
  }

  private String validToken() {
    return tokens.mint(JOB, "demo", Instant.now().minusSeconds(5), Duration.ofMinutes(10));
  }

  private String update(String ref) {
    return ZERO + " " + commit + " " + ref;
  }

  private int run(String... lines) {
    return new PreReceiveMain(env, new PrintStream(err, true, StandardCharsets.UTF_8))
        .run(gitDir, List.of(lines));
  }

  private String output() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private void setConfig(String name, String value) throws IOException {
    try (Repository repo =
        new FileRepositoryBuilder().setGitDir(gitDir).setMustExist(true).build()) {
      StoredConfig config = repo.getConfig();
      config.setString("spbgit", null, name, value);
      config.save();
    }
  }

  private void unsetConfig(String name) throws IOException {
    try (Repository repo =
        new FileRepositoryBuilder().setGitDir(gitDir).setMustExist(true).build()) {
      StoredConfig config = repo.getConfig();
      config.unset("spbgit", null, name);
      config.save();
    }
  }
}
