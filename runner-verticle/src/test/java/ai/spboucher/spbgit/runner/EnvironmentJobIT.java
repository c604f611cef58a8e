package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.env.NpmPackage;
import ai.spboucher.spbgit.runner.env.NpmRegistry;
import ai.spboucher.spbgit.runner.env.OwnAddress;
import ai.spboucher.spbgit.runner.env.PackageIndex;
import ai.spboucher.spbgit.runner.env.Wheel;
import ai.spboucher.spbgit.runner.env.WheelBuilder;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Jobs with an environment, through a real gateway, NATS and Docker, on the python and node images:
 * the setup phase installs a package from a registry served on this machine's own address, through
 * its own egress proxy and allow-list, in a container of its own; the agent phase, whose allow-list
 * lacks the registry, is refused it and the egress record says which phase tried; a second job with
 * the same key restores the cache and skips setup; a failing setup ends {@code setup_failed}, one
 * outliving the wall clock {@code timeout}; a job for an image no runner offers is not taken. The
 * requests are published as the gateway publishes them, with their {@link Environment} set (the
 * gateway's reading of {@code .spbgit/agent.yml} is tested on its side).
 *
 * <p>Images: {@code SPB_ENV_IMAGE_TAG} (default {@code latest}) of spbgit/agent,
 * spbgit/agent-python and spbgit/agent-node, built by docker/job-image/build.sh from this
 * checkout's entrypoint.
 */
class EnvironmentJobIT {

  private static final String TAG = System.getenv().getOrDefault("SPB_ENV_IMAGE_TAG", "latest");

  @TempDir static Path tmp;
  static JobTestBed bed;
  static InetAddress address;

  @BeforeAll
  static void startBed() throws Exception {
    JobTestBed.requireDocker();
    address = OwnAddress.nonLoopbackIpv4();
    bed = JobTestBed.start(tmp, "10m");
    bed.startRunner(
        "env",
        Map.of(
            "SPB_IMAGES",
            "base=spbgit/agent:"
                + TAG
                + ",python=spbgit/agent-python:"
                + TAG
                + ",node=spbgit/agent-node:"
                + TAG,
            "SPB_LIMIT_DISK",
            "256m",
            "SPB_LIMIT_MEMORY",
            "768m",
            "SPB_LIMIT_PIDS",
            "256",
            "SPB_CACHE_SIZE",
            "128m"));
  }

  @AfterAll
  static void stopBed() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  private static JobRequest exec(
      String repo, String id, long wallSeconds, String exec, String test, Environment environment)
      throws Exception {
    return bed.request(repo, id, Mode.MODE_EXEC, "environment job", wallSeconds)
        .setExecCommand(exec)
        .setTestCommand(test)
        .setEnvironment(environment)
        .build();
  }

  @Test
  void pythonSetupInstallsThroughItsOwnEgressTheAgentPhaseIsRefusedAndTheNextJobHitsTheCache()
      throws Exception {
    Wheel wheel =
        WheelBuilder.distribution("spb-env-probe", "1.0.0")
            .module("spb_env_probe", "ANSWER = 42\n")
            .build();
    bed.createRepo(
        "py",
        Map.of(
            "requirements.txt",
            "spb-env-probe==1.0.0\n",
            "test_probe.py",
            "import spb_env_probe\nassert spb_env_probe.ANSWER == 42\n"));
    try (PackageIndex index = PackageIndex.serve(address, wheel)) {
      String target = index.trustedHost() + ":" + index.port();
      String pip =
          "--no-input --disable-pip-version-check --index-url "
              + index.simpleUrl()
              + " --trusted-host "
              + index.trustedHost();
      Environment environment =
          Environment.newBuilder()
              .setImage("python")
              .setSetup(
                  "python3 -m venv /work/venv && /work/venv/bin/pip install "
                      + pip
                      + " -r requirements.txt")
              .addSetupEgress(target)
              .addCache("/work/venv")
              .addCacheKeyFiles("requirements.txt")
              .build();
      // The agent phase tries the same index (refused: not on its list), then makes a change.
      String exec =
          "/work/venv/bin/pip download --no-deps -d /tmp/dl --retries 0 --timeout 5 "
              + pip
              + " spb-env-probe==1.0.0 || echo 'index refused'; echo changed > CHANGED.txt";
      String test = "/work/venv/bin/python test_probe.py";

      bed.publish(exec("py", "env-py-1", 300, exec, test, environment));
      StatusChange first = bed.awaitFinishedEvent("env-py-1", Duration.ofMinutes(5));
      String log = bed.log("env-py-1");
      assertEquals("ok", first.getExitReason(), first + "\n" + log);
      assertTrue(log.contains("[spb-runner] cache miss "), log);
      assertTrue(log.contains("[spb-runner] setup phase starting"), log);
      assertTrue(log.contains("[spb-runner] agent phase starting"), log);
      assertTrue(log.contains("index refused"), log);
      assertTrue(log.contains("pushed refs/agents/env-py-1/proposal"), log);
      assertEquals(1, index.downloadsOf(wheel).size(), index.requests().toString());
      StatusChange started = started("env-py-1");
      assertEquals(CacheOutcome.CACHE_MISS, started.getCache());
      assertTrue(started.getImageDigest().startsWith("sha256:"), started.toString());
      List<EgressAttempt> egress = bed.egressAttempts("env-py-1");
      assertTrue(
          egress.stream()
              .anyMatch(
                  a ->
                      a.getPhase().equals("setup")
                          && a.getAllowed()
                          && target.equals(a.getHost() + ":" + a.getPort())),
          egress.toString());
      assertTrue(
          egress.stream()
              .anyMatch(
                  a ->
                      a.getPhase().equals("agent")
                          && !a.getAllowed()
                          && target.equals(a.getHost() + ":" + a.getPort())),
          egress.toString());
      assertFalse(
          egress.stream()
              .anyMatch(
                  a ->
                      a.getPhase().equals("agent")
                          && a.getAllowed()
                          && target.equals(a.getHost() + ":" + a.getPort())),
          egress.toString());

      bed.publish(exec("py", "env-py-2", 300, "echo again > CHANGED.txt", test, environment));
      StatusChange second = bed.awaitFinishedEvent("env-py-2", Duration.ofMinutes(5));
      String again = bed.log("env-py-2");
      assertEquals("ok", second.getExitReason(), second + "\n" + again);
      assertTrue(again.contains("[spb-runner] cache hit "), again);
      assertFalse(again.contains("setup phase starting"), again);
      assertEquals(CacheOutcome.CACHE_HIT, started("env-py-2").getCache());
      assertEquals(
          1, index.downloadsOf(wheel).size(), "setup did not run again: " + index.requests());
    }
  }

  @Test
  void nodeSetupInstallsFromTheLocalNpmRegistry() throws Exception {
    NpmPackage probe =
        NpmPackage.named("spb-env-probe", "1.0.0")
            .indexJs("module.exports = { answer: 42 };\n")
            .build();
    bed.createRepo(
        "js",
        Map.of(
            "package.json",
            "{\"name\":\"js\",\"version\":\"1.0.0\",\"private\":true,"
                + "\"dependencies\":{\"spb-env-probe\":\"1.0.0\"}}\n"));
    try (NpmRegistry registry = NpmRegistry.serve(address, probe)) {
      Environment environment =
          Environment.newBuilder()
              .setImage("node")
              .setSetup(
                  "npm install --registry "
                      + registry.url()
                      + " --no-audit --no-fund --no-update-notifier")
              .addSetupEgress(address.getHostAddress() + ":" + registry.port())
              .addCache("/work/repo/node_modules")
              .addCacheKeyFiles("package.json")
              .build();
      bed.publish(
          exec(
              "js",
              "env-js-1",
              300,
              "echo changed > CHANGED.txt",
              "node -e \"process.exit(require('spb-env-probe').answer === 42 ? 0 : 1)\"",
              environment));
      StatusChange done = bed.awaitFinishedEvent("env-js-1", Duration.ofMinutes(5));
      String log = bed.log("env-js-1");
      assertEquals("ok", done.getExitReason(), done + "\n" + log);
      assertEquals(1, registry.downloadsOf(probe).size(), registry.requests().toString());
      assertTrue(log.contains("tests passed"), log);
    }
  }

  @Test
  void theRepositorysAgentYmlDrivesAJobCreatedThroughTheGateway() throws Exception {
    bed.createRepo(
        "yml",
        Map.of(
            ".spbgit/agent.yml",
            """
        image: python
        setup: python3 -m venv /work/venv && /work/venv/bin/python -c 'open("/work/venv/made", "w").write("1")' && mkdir -p .deps && echo 1 > .deps/made
        cache: [/work/venv, /work/repo/.deps]
        cache_key_files: [README.md, missing.lock]
        """,
            "README.md",
            "hi\n"));
    String id =
        bed.submit(
                "yml",
                "test -f /work/venv/made && echo changed > CHANGED.txt",
                "/work/venv/bin/python -c 'import sys'")
            .getString("id");
    io.vertx.core.json.JsonObject done = bed.awaitFinished("yml", id);
    String log = bed.log(id);
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily() + "\n" + log);
    assertEquals("miss", done.getString("cache"), done.encodePrettily());
    assertTrue(done.getString("image_digest").startsWith("sha256:"), done.encodePrettily());
    assertTrue(
        log.contains("[spb-runner] setup phase starting") && log.contains("(image python"), log);
    // The owner sees which phase made each network attempt: the clone's and the agent's pushes.
    assertTrue(phases(id).contains("clone") && phases(id).contains("agent"), phases(id).toString());
    // The miss keyed the cache from the clone container's files.
    java.util.regex.Matcher missKey =
        java.util.regex.Pattern.compile("cache miss ([0-9a-f]{64})").matcher(log);
    assertTrue(missKey.find(), log);

    // The hit: keyed from the gateway's digest of the same files at the base commit, restored
    // before
    // any clone, cloned by the agent container itself on that commit, the restored files inside the
    // clone kept out of its status.
    long since = java.time.Instant.now().getEpochSecond() - 1;
    String base = done.getString("base_sha");
    String again =
        bed.submit(
                "yml",
                "test -f /work/venv/made && test -f .deps/made"
                    + " && test \"$(git rev-parse HEAD)\" = "
                    + base
                    + " && test -z \"$(git status --porcelain)\" && echo hit > HIT.txt",
                "")
            .getString("id");
    io.vertx.core.json.JsonObject hit = bed.awaitFinished("yml", again);
    String hitLog = bed.log(again);
    assertEquals("ok", hit.getString("exit_reason"), hit.encodePrettily() + "\n" + hitLog);
    assertEquals("hit", hit.getString("cache"), hit.encodePrettily());
    assertEquals(done.getString("image_digest"), hit.getString("image_digest"));
    assertEquals(base, hit.getString("base_sha"));
    assertTrue(hitLog.contains("cache hit " + missKey.group(1) + " (key files at " + base), hitLog);
    assertFalse(hitLog.contains("clone phase starting"), hitLog);
    assertTrue(hitLog.contains("pushed refs/agents/" + again + "/proposal"), hitLog);
    assertEquals(
        List.of("spb-job-" + again),
        containersCreated(again, since),
        "a hit runs the agent container only");
    assertEquals(List.of("agent"), phases(again), "the agent container's clone is the agent's");
  }

  /**
   * A hit keyed by the gateway's digest clones the commit the digest was read at, also when the
   * branch moved on meanwhile; when the branch no longer has that commit the job ends 92, the
   * clone's exit code, rather than run on files the key never saw.
   */
  @Test
  void aGatewayKeyedHitWorksOnItsBaseAfterTheBranchMovedAndEnds92WhenTheBranchLacksIt()
      throws Exception {
    bed.createRepo("moved", Map.of("deps.lock", "v1\n", "README.md", "one\n"));
    Path seed = tmp.resolve("seed-moved");
    Environment environment =
        Environment.newBuilder()
            .setImage("base")
            .setSetup("mkdir -p /work/deps && echo 1 > /work/deps/made")
            .addCache("/work/deps")
            .addCacheKeyFiles("deps.lock")
            .build();
    // No digest: the clone container keys the cache from its clone, and setup keeps it.
    bed.publish(exec("moved", "env-moved-1", 120, "true", "", environment));
    StatusChange first = bed.awaitFinishedEvent("env-moved-1", Duration.ofMinutes(3));
    assertEquals("ok", first.getExitReason(), first + "\n" + bed.log("env-moved-1"));
    String base = bed.git.ok(seed, "rev-parse", "HEAD").output().strip();
    Environment keyed =
        environment.toBuilder()
            .setCacheKeyFilesDigest(
                JobCache.keyFilesDigest(
                    new java.util.TreeMap<>(Map.of("deps.lock", "v1\n".getBytes()))))
            .build();

    Files.writeString(seed.resolve("README.md"), "two\n");
    bed.git.ok(seed, "commit", "-q", "-am", "main moves on");
    bed.git.ok(seed, "push", "-q", bed.gateway.pushUrl("moved", bed.gateway.ownerToken), "main");
    bed.publish(
        exec(
                "moved",
                "env-moved-2",
                120,
                "test \"$(git rev-parse HEAD)\" = "
                    + base
                    + " && test -f /work/deps/made && grep -qx one README.md",
                "",
                keyed)
            .toBuilder()
            .setBaseSha(base)
            .build());
    StatusChange moved = bed.awaitFinishedEvent("env-moved-2", Duration.ofMinutes(3));
    String log = bed.log("env-moved-2");
    assertEquals("ok", moved.getExitReason(), moved + "\n" + log);
    assertEquals(CacheOutcome.CACHE_HIT, started("env-moved-2").getCache());
    assertTrue(log.contains("main moved to "), log);
    assertFalse(log.contains("clone phase starting"), log);

    // A commit main never had (as after a force-push that dropped the job's base).
    Files.writeString(seed.resolve("README.md"), "never pushed\n");
    bed.git.ok(seed, "commit", "-q", "-am", "local only");
    String gone = bed.git.ok(seed, "rev-parse", "HEAD").output().strip();
    bed.publish(
        exec("moved", "env-moved-3", 120, "echo should not run", "", keyed).toBuilder()
            .setBaseSha(gone)
            .build());
    StatusChange lacking = bed.awaitFinishedEvent("env-moved-3", Duration.ofMinutes(3));
    String lackingLog = bed.log("env-moved-3");
    assertEquals("exit_code:92", lacking.getExitReason(), lacking + "\n" + lackingLog);
    assertTrue(lackingLog.contains("no longer has the job's base " + gone), lackingLog);
    assertFalse(lackingLog.contains("should not run"), lackingLog);
  }

  /** The phases of the job's egress attempts, as the owner's API lists them. */
  private static List<String> phases(String id) throws Exception {
    String egress =
        bed.gateway
            .api(
                "GET",
                "/api/v1/repos/yml/agent-jobs/" + id + "/egress",
                bed.gateway.ownerToken,
                null)
            .body();
    return new io.vertx.core.json.JsonArray(egress)
        .stream()
            .map(a -> ((io.vertx.core.json.JsonObject) a).getString("phase"))
            .distinct()
            .toList();
  }

  /** The names of the job's containers the engine created since {@code since} (epoch seconds). */
  private static List<String> containersCreated(String jobId, long since) throws Exception {
    Process events =
        new ProcessBuilder(
                "docker",
                "events",
                "--since",
                String.valueOf(since),
                "--until",
                String.valueOf(java.time.Instant.now().getEpochSecond() + 1),
                "--filter",
                "type=container",
                "--filter",
                "event=create",
                "--filter",
                "label=" + SandboxSpec.JOB_LABEL + "=" + jobId,
                "--format",
                "{{.Actor.Attributes.name}}")
            .redirectErrorStream(true)
            .start();
    String out = new String(events.getInputStream().readAllBytes()).strip();
    assertEquals(0, events.waitFor(), out);
    return out.isEmpty() ? List.of() : List.of(out.split("\n"));
  }

  @Test
  void setupHasNoGitOrModelSocketAndNothingItStartsSurvivesIntoTheAgentPhase() throws Exception {
    bed.createRepo("bg", Map.of("README.md", "hi\n"));
    Environment environment =
        Environment.newBuilder()
            .setImage("base")
            .setSetup(
                "(sleep 600 &); test ! -e /run/spb/git.sock && test ! -e /run/spb/model.sock"
                    + " && test -S /run/spb/egress.sock && echo 'setup sockets: egress only'")
            .build();
    bed.publish(
        exec(
            "bg",
            "env-bg",
            120,
            "if pgrep -x sleep; then echo 'a setup process survived'; exit 5; fi",
            "",
            environment));
    StatusChange done = bed.awaitFinishedEvent("env-bg", Duration.ofMinutes(3));
    String log = bed.log("env-bg");
    assertEquals("ok", done.getExitReason(), done + "\n" + log);
    assertTrue(log.contains("setup sockets: egress only"), log);
    assertFalse(log.contains("a setup process survived"), log);
  }

  @Test
  void aFailingSetupEndsSetupFailedWithItsExitCodeAndPushesNothing() throws Exception {
    bed.createRepo("broken", Map.of("README.md", "hi\n"));
    Environment environment =
        Environment.newBuilder().setImage("base").setSetup("echo 'setting up'; exit 3").build();
    bed.publish(exec("broken", "env-broken", 120, "echo changed > CHANGED.txt", "", environment));
    StatusChange done = bed.awaitFinishedEvent("env-broken", Duration.ofMinutes(3));
    String log = bed.log("env-broken");
    assertEquals(ExitReason.SETUP_FAILED, done.getExitReason(), done + "\n" + log);
    assertTrue(done.getDetail().contains("exited 3"), done.toString());
    assertTrue(log.contains("setting up"), log);
    assertFalse(log.contains("agent phase starting"), log);
    assertFalse(log.contains("pushed refs/agents"), log);
  }

  @Test
  void aSetupOutlivingTheWallClockEndsTimeout() throws Exception {
    bed.createRepo("slow", Map.of("README.md", "hi\n"));
    Environment environment =
        Environment.newBuilder().setImage("base").setSetup("sleep 600").build();
    bed.publish(exec("slow", "env-slow", 20, "true", "", environment));
    StatusChange done = bed.awaitFinishedEvent("env-slow", Duration.ofMinutes(3));
    assertEquals(ExitReason.TIMEOUT, done.getExitReason(), done + "\n" + bed.log("env-slow"));
    assertTrue(bed.jobContainers("env-slow").isEmpty(), "the setup container is gone");
  }

  @Test
  void aJobForAnImageNoRunnerOffersWaitsInTheQueue() throws Exception {
    bed.createRepo("ruby", Map.of("README.md", "hi\n"));
    long before = bed.queuedRequests();
    bed.publish(
        exec(
            "ruby", "env-ruby", 60, "true", "", Environment.newBuilder().setImage("ruby").build()));
    Thread.sleep(5000);
    assertTrue(bed.statusEvents("env-ruby").isEmpty(), "no runner took it");
    assertEquals(before + 1, bed.queuedRequests(), "it waits in the queue");
  }

  private static StatusChange started(String jobId) throws Exception {
    return bed.statusEvents(jobId).stream()
        .map(JobEvent::getStatus)
        .filter(s -> s.getStatus() == JobStatus.STARTED)
        .findFirst()
        .orElseThrow();
  }
}
