package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GatewayProcess;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.NatsServer;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The layout without compose: nats-server (in the compose layout's image, {@link NatsServer}), the
 * gateway and a runner as separate processes that only share NATS (and, here, the Docker engine and
 * the gateway's HTTP port). NATS runs the compose layout's own configuration ({@code
 * docker/compose/nats/nats-server.conf}: TLS from {@code gen-nats-tls.sh}, one user per role with
 * only that role's subjects), so a job running through it proves those permissions are enough, and
 * none is violated on the way. A runner with wrong credentials is refused and says so.
 */
class TwoNodeIT {

  @TempDir Path tmp;
  private NatsServer nats;
  private GatewayProcess gateway;
  private RunnerProcess runner;

  @AfterEach
  void stop() throws Exception {
    if (runner != null) {
      runner.close();
    }
    if (gateway != null) {
      gateway.close();
    }
    if (nats != null) {
      nats.close();
    }
  }

  @Test
  void aJobRunsThroughSeparateProcessesWithNatsAuthentication() throws Exception {
    JobTestBed.requireDocker();
    int natsPort = NatsServer.freePort();
    Path gatewayPassword =
        Files.writeString(tmp.resolve("gateway.pw"), "gw-" + System.nanoTime() + "\n");
    Path runnerPassword =
        Files.writeString(tmp.resolve("runner.pw"), "rn-" + System.nanoTime() + "\n");
    Path ca = writeComposeNatsConfig(natsPort, gatewayPassword, runnerPassword);
    startNats(natsPort);

    String url = "tls://127.0.0.1:" + natsPort;
    gateway =
        GatewayProcess.start(
            tmp.resolve("gateway"),
            tmp.resolve("gateway-logs"),
            Map.of(
                "SPB_NATS_URL",
                url,
                "SPB_NATS_USER",
                "gateway",
                "SPB_NATS_PASSWORD_FILE",
                gatewayPassword.toString(),
                "SPB_NATS_CA",
                ca.toString()));

    Map<String, String> env = new HashMap<>();
    env.put("SPB_NATS_URL", url);
    env.put("SPB_NATS_USER", "runner");
    env.put("SPB_NATS_PASSWORD_FILE", runnerPassword.toString());
    env.put("SPB_NATS_CA", ca.toString());
    env.put("SPB_RUNNER_ID", "node2");
    env.put("SPB_AGENT_IMAGE", JobTestBed.IMAGE);
    env.put("SPB_RUNNER_WORK_DIR", tmp.resolve("runner-work").toString());
    env.put("SPB_LIMIT_MEMORY", "256m");
    env.put("SPB_LIMIT_DISK", "32m");
    env.put("SPB_GATEWAY_KEYS", tmp.resolve("gateway/keys/job-bus").toString());
    int healthPort = NatsServer.freePort();
    env.put("SPB_RUNNER_HEALTH", "127.0.0.1:" + healthPort);
    try {
      runner = RunnerProcess.start(env, tmp.resolve("logs"));
    } catch (IOException e) {
      throw new IOException(e.getMessage() + "\nnats-server:\n" + Files.readString(nats.log()), e);
    }

    // The operator authorizes the runner's key: the gateway seals job tokens to it from now on.
    Files.copy(runner.publicKey(), tmp.resolve("gateway/keys/runners/node2.pub.pem"));
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> health =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/healthz"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, health.statusCode(), health.body());
    assertEquals("node2", new JsonObject(health.body()).getString("runner_id"));
    assertEquals(201, gateway.api("POST", "/api/v1/repos", "{\"name\":\"demo\"}").statusCode());
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = git.workTree(tmp, "work");
    git.ok(work, "push", "-q", gateway.gitUrl("demo", gateway.ownerToken()), "main");
    JsonObject job =
        new JsonObject(
            gateway
                .api(
                    "POST",
                    "/api/v1/repos/demo/agent-jobs",
                    "{\"task\":\"two nodes\",\"exec\":\"echo hi > two-nodes.txt\"}")
                .body());
    String id = job.getString("id");
    JsonObject done = job;
    for (int i = 0; i < 240 && !"finished".equals(done.getString("status")); i++) {
      Thread.sleep(250);
      done = new JsonObject(gateway.api("GET", "/api/v1/repos/demo/agent-jobs/" + id, null).body());
    }
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily() + "\n" + runner.log());
    assertEquals("node2", done.getString("runner_id"));
    assertTrue(done.getString("proposal_sha") != null);
    String natsLog = Files.readString(nats.log());
    assertFalse(
        natsLog.contains("Permissions Violation"),
        "a role needs a subject it may not use:\n" + natsLog);
    assertTrue(natsLog.contains("TLS required"), "nats-server runs with TLS:\n" + natsLog);

    Map<String, String> wrong = new HashMap<>(env);
    wrong.put("SPB_RUNNER_ID", "intruder");
    wrong.remove("SPB_RUNNER_HEALTH");
    wrong.put(
        "SPB_NATS_PASSWORD_FILE", Files.writeString(tmp.resolve("wrong.pw"), "guess").toString());
    IOException refused =
        org.junit.jupiter.api.Assertions.assertThrows(
            IOException.class, () -> RunnerProcess.start(wrong, tmp.resolve("logs-intruder")));
    assertTrue(
        refused.getMessage().contains("refused this runner's credentials"), refused.getMessage());
    assertFalse(refused.getMessage().contains("guess"), "the password is never logged");
  }

  /**
   * The compose layout's NATS configuration with this test's paths and ports, a throwaway CA and
   * server certificate from {@code gen-nats-tls.sh}, and the two role passwords; returns the CA's
   * certificate.
   */
  private Path writeComposeNatsConfig(int port, Path gatewayPassword, Path runnerPassword)
      throws Exception {
    Path compose = Path.of("..", "docker", "compose");
    Path secrets = tmp.resolve("secrets");
    ProcessBuilder gen =
        new ProcessBuilder(compose.resolve("gen-nats-tls.sh").toString())
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("gen-nats-tls.log").toFile());
    gen.environment().put("SPB_SECRETS_DIR", secrets.toString());
    // The server key's owner: NatsServer runs nats-server as the owner of its directory (this
    // test's user), not as the image's nats user.
    gen.environment().put("SPB_NATS_UID", String.valueOf(Files.getAttribute(tmp, "unix:uid")));
    Process certs = gen.start();
    if (!certs.waitFor(60, TimeUnit.SECONDS) || certs.exitValue() != 0) {
      throw new IOException(
          "gen-nats-tls.sh failed: " + Files.readString(tmp.resolve("gen-nats-tls.log")));
    }
    Path tls = secrets.resolve("tls");
    Files.writeString(
        secrets.resolve("passwords.conf"),
        "GATEWAY_PASSWORD: \""
            + Files.readString(gatewayPassword).strip()
            + "\"\n"
            + "RUNNER_PASSWORD: \""
            + Files.readString(runnerPassword).strip()
            + "\"\n");
    String conf =
        Files.readString(compose.resolve("nats").resolve("nats-server.conf"))
            .replace("listen: 0.0.0.0:4222", "listen: 127.0.0.1:" + port)
            .replace("http: 0.0.0.0:8222", "http: 127.0.0.1:" + NatsServer.freePort())
            .replace("/etc/nats/tls/", tls + "/")
            .replace(
                "store_dir: /data",
                "store_dir: \"" + Files.createDirectories(tmp.resolve("js")) + "\"");
    assertTrue(
        conf.contains("listen: 127.0.0.1:")
            && conf.contains(tls + "/server.pem")
            && conf.contains("include ./passwords.conf"),
        "the compose configuration changed shape:\n" + conf);
    // include is relative to the configuration file: it sits next to passwords.conf.
    Files.writeString(secrets.resolve("nats.conf"), conf);
    return tls.resolve("ca.pem");
  }

  private void startNats(int port) throws Exception {
    nats = NatsServer.startConfigured(tmp, port, tmp.resolve("secrets").resolve("nats.conf"));
  }
}
