package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.testsupport.Prerequisites;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The uid job containers run as, with the runner as its own process: it refuses a login account's
 * uid, root, and an agent image built for another uid before it takes any job, and with the default
 * its jobs run as a uid that owns their files on the host but is no account of the host.
 */
class SandboxUidIT {

  private static final int UID = RunnerConfig.DEFAULT_SANDBOX_UID;

  @TempDir static Path tmp;
  static JobTestBed bed;

  /**
   * An account this test created, to delete afterwards; null when the host already had a login
   * account.
   */
  static String createdAccount;

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterAll
  static void stop() throws Exception {
    if (createdAccount != null) {
      run("userdel", createdAccount);
    }
    bed.close();
  }

  @Test
  void refusesToStartWithTheUidOfALoginAccountOfThisHost() throws Exception {
    SandboxUidCheck.Account login = loginAccount();
    Map<String, String> env = new HashMap<>(bed.runnerEnv("login-uid"));
    env.put("SPB_SANDBOX_UID", Integer.toString(login.uid()));
    String refused = refusal(env, tmp.resolve("logs-login"));
    assertTrue(refused.contains("the runner exited with 1"), refused);
    assertTrue(
        refused.contains(
            "spb-runner: cannot start: SPB_SANDBOX_UID="
                + login.uid()
                + " is the uid of the login account '"
                + login.name()
                + "'"),
        refused);
  }

  @Test
  void refusesToStartAsRoot() throws Exception {
    Map<String, String> env = new HashMap<>(bed.runnerEnv("root-uid"));
    env.put("SPB_SANDBOX_UID", "0");
    String refused = refusal(env, tmp.resolve("logs-root"));
    assertTrue(refused.contains("the runner exited with 2"), refused);
    assertTrue(
        refused.contains(
            "spb-runner: SPB_SANDBOX_UID must be a uid from 1 to 2147483647 (never root), got 0"),
        refused);
  }

  @Test
  void refusesToStartWithAnAgentImageBuiltForAnotherUid() throws Exception {
    int other = 2_000_000_001;
    assertEquals("", getent(other), "no account of this host has uid " + other);
    Map<String, String> env = new HashMap<>(bed.runnerEnv("other-uid"));
    env.put("SPB_SANDBOX_UID", Integer.toString(other));
    String refused = refusal(env, tmp.resolve("logs-other"));
    assertTrue(
        refused.contains(
            "spb-runner: cannot start: agent image "
                + JobTestBed.IMAGE
                + " was built for uid "
                + UID
                + " but SPB_SANDBOX_UID is "
                + other
                + ": rebuild it with SPB_SANDBOX_UID="
                + other
                + " docker/job-image/build.sh"),
        refused);
  }

  /** What the runner said as it refused to start; fails (after stopping it) when it started. */
  private static String refusal(Map<String, String> env, Path logs) throws Exception {
    try (RunnerProcess started = RunnerProcess.start(env, logs)) {
      return fail("the runner started:\n" + started.log());
    } catch (IOException e) {
      return e.getMessage();
    }
  }

  @Test
  void runsJobsAsTheDefaultUidWhichOwnsTheirFilesOnTheHostAndIsNoAccount() throws Exception {
    Prerequisites.require(
        "root".equals(System.getProperty("user.name")),
        "root: only a root runner mounts /work on the host, where the test can look at it");
    assertEquals("", getent(UID), "no account of this host has uid " + UID);
    Map<String, String> env = bed.runnerEnv("default-uid");
    try (RunnerProcess runner = RunnerProcess.start(env, tmp.resolve("logs-default"))) {
      String id =
          bed.submit(
                  "demo",
                  "echo \"uid=$(id -u) gid=$(id -g)\"; echo made > /work/made-by-job; "
                      + "while [ ! -e /work/seen ]; do sleep 0.2; done",
                  null)
              .getString("id");
      Path made = Path.of(env.get("SPB_RUNNER_WORK_DIR"), id, "work", "made-by-job");
      JobTestBed.awaitCondition(
          "the job's file on the host", Duration.ofSeconds(60), () -> Files.exists(made));
      assertEquals(UID, (Integer) Files.getAttribute(made, "unix:uid", LinkOption.NOFOLLOW_LINKS));
      assertEquals(UID, (Integer) Files.getAttribute(made, "unix:gid", LinkOption.NOFOLLOW_LINKS));
      assertEquals(
          UID,
          (Integer) Files.getAttribute(made.getParent(), "unix:uid", LinkOption.NOFOLLOW_LINKS),
          "/work itself");
      // The host's word to the job that it has looked: the job ends, the runner releases the
      // volume.
      Files.writeString(made.resolveSibling("seen"), "");
      assertEquals("ok", bed.awaitFinished("demo", id).getString("exit_reason"), bed.log(id));
      assertTrue(bed.log(id).contains("uid=" + UID + " gid=" + UID), bed.log(id));
      assertFalse(runner.log().contains("has no spb.agent.uid label"), runner.log());
    }
  }

  /**
   * A login account of this host: the first in /etc/passwd other than root, or one this test
   * creates.
   */
  private static SandboxUidCheck.Account loginAccount() throws Exception {
    String passwd = Files.readString(Path.of("/etc/passwd"), StandardCharsets.UTF_8);
    for (SandboxUidCheck.Account account : SandboxUidCheck.parsePasswd(passwd)) {
      if (account.uid() != 0 && account.canLogIn()) {
        return account;
      }
    }
    Prerequisites.require(
        "root".equals(System.getProperty("user.name")), "a login account, or root to add one");
    createdAccount = "spbuid" + Long.toString(System.nanoTime() % 1_000_000, 36);
    run("useradd", "--no-create-home", "--shell", "/bin/bash", createdAccount);
    return SandboxUidCheck.parsePasswd(getent(createdAccount)).get(0);
  }

  private static String getent(Object key) throws Exception {
    Process p =
        new ProcessBuilder("getent", "passwd", key.toString()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return p.waitFor() == 0 ? out : "";
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), String.join(" ", command) + ": " + out);
  }
}
