package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job in exec mode probes its own sandbox from inside and every way out must fail, except its own
 * repository through the runner's git relay; no secret is found inside. Listeners on this machine's
 * own addresses count every connection they get, so "blocked" is checked on both sides. No probe is
 * ever aimed at an address outside this machine.
 */
class SandboxIT {

  @TempDir static Path tmp;
  static JobTestBed bed;
  static final List<HostListener> listeners = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "40s");
    bed.startRunner("sandbox", Map.of());
    bed.createRepo(
        "probe",
        Map.of(
            "probe.sh",
            Files.readString(Path.of(SandboxIT.class.getResource("/sandbox-probe.sh").toURI()))));
  }

  @AfterAll
  static void stop() throws Exception {
    for (HostListener l : listeners) {
      l.close();
    }
    bed.close();
  }

  @Test
  void everyWayOutIsClosedButTheJobsOwnRepository() throws Exception {
    HostListener loopback = keep(HostListener.listen(InetAddress.getByName("127.0.0.1")));
    HostListener hostAddress = keep(HostListener.listen(HostListener.hostAddress()));
    HostListener bridge =
        keep(HostListener.dockerBridge().map(HostListener::listenQuietly).orElse(null));
    HostListener ipv6 = keep(HostListener.listenQuietly(InetAddress.getByName("::1")));
    String exec =
        String.join(
            " ",
            "GATEWAY=" + bed.gateway.baseUrl,
            "LOOP=127.0.0.1:" + loopback.port(),
            "HOST=" + hostAddress.hostPort(),
            "BRIDGE=" + (bridge == null ? "" : bridge.hostPort()),
            "V6=" + (ipv6 == null ? "" : ipv6.hostPort()),
            "NATS=127.0.0.1:" + bed.nats.port(),
            "sh probe.sh");
    String id = bed.submit("probe", exec, null).getString("id");
    JsonObject done = bed.awaitFinished("probe", id);
    String log = bed.log(id);
    assertEquals("ok", done.getString("exit_reason"), log);
    Map<String, String> probes = probes(log);

    assertEquals("reachable", probes.get("relay_own_repo"), log);
    assertEquals("reachable", probes.get("write_work"), log);
    for (String blocked :
        List.of(
            "gateway_api",
            "gateway_api_direct",
            "relay_api",
            "relay_other_repo",
            "job_token",
            "write_root",
            "write_etc",
            "write_usr_bin",
            "loopback_via_proxy",
            "loopback_direct",
            "host_via_proxy",
            "host_direct",
            "host_noproxy_env",
            "nats_via_proxy",
            "nats_connect_tunnel",
            "gateway_connect_other_port",
            "dns_lookup",
            "ipv6_direct",
            "ipv6_via_proxy",
            "unshare_user",
            "unshare_net",
            "mount_tmpfs",
            "docker_socket",
            "read_host_proc",
            "setuid_su")) {
      assertEquals("blocked", probes.get(blocked), blocked + "\n" + log);
    }
    if (bridge != null) {
      assertEquals("blocked", probes.get("bridge_via_proxy"), log);
      assertEquals("blocked", probes.get("bridge_direct"), log);
    }
    assertEquals("0000000000000000", probes.get("cap_eff"), log);
    assertEquals(Integer.toString(RunnerConfig.DEFAULT_SANDBOX_UID), probes.get("uid"), log);

    Set<String> envKeys = new TreeSet<>(Arrays.asList(probes.get("env_keys").split(",")));
    Set<String> expected =
        new TreeSet<>(
            List.of(
                "HOME",
                "HOSTNAME",
                "HTTPS_PROXY",
                "HTTP_PROXY",
                "NO_PROXY",
                "PATH",
                "PWD",
                "SHLVL",
                "SPB_BASE_REF",
                "SPB_CLONE_URL",
                "SPB_EXEC",
                "SPB_JOB_ID",
                "SPB_MODE",
                "SPB_REPO",
                "SPB_TASK",
                "SPB_TEST_COMMAND",
                "http_proxy",
                "https_proxy",
                "no_proxy",
                "npm_config_proxy",
                "GATEWAY",
                "LOOP",
                "HOST",
                "BRIDGE",
                "V6",
                "NATS",
                "OLDPWD",
                "GIT_TERMINAL_PROMPT",
                "GIT_CONFIG_NOSYSTEM",
                "LANG",
                "LC_ALL"));
    assertTrue(expected.containsAll(envKeys), "unexpected environment: " + envKeys);
    assertFalse(log.contains(bed.gateway.ownerToken), "the owner token never reaches the sandbox");

    for (HostListener l : Arrays.asList(loopback, hostAddress, bridge, ipv6)) {
      if (l != null) {
        assertEquals(0, l.accepted().get(), "connections reached " + l.hostPort());
      }
    }
  }

  @Test
  void containerIsCreatedWithTheHardeningFlags() throws Exception {
    String id = bed.submit("probe", "sleep 30", null).getString("id");
    bed.await("probe", id, "started", Duration.ofSeconds(60));
    try (DockerSandbox docker = new DockerSandbox("unix:///var/run/docker.sock")) {
      InspectContainerResponse c = docker.client().inspectContainerCmd("spb-job-" + id).exec();
      HostConfig host = c.getHostConfig();
      assertTrue(host.getReadonlyRootfs());
      assertEquals("none", host.getNetworkMode());
      assertTrue(Arrays.asList(host.getCapDrop()).contains(Capability.ALL));
      assertTrue(host.getCapAdd() == null || host.getCapAdd().length == 0);
      assertTrue(host.getSecurityOpts().contains("no-new-privileges"));
      assertFalse(Boolean.TRUE.equals(host.getPrivileged()));
      assertEquals(256L << 20, host.getMemory());
      assertEquals(host.getMemory(), host.getMemorySwap(), "no swap");
      assertEquals(128L, host.getPidsLimit());
      assertEquals(1_000_000_000L, host.getNanoCPUs());
      assertEquals(JobTestBed.SANDBOX_USER, c.getConfig().getUser());
      assertEquals(id, c.getConfig().getLabels().get("spb.job"));
      assertEquals("sandbox", c.getConfig().getLabels().get("spb.runner"));
      assertNotNull(host.getTmpFs().get("/tmp"));
      for (var bind : host.getBinds()) {
        assertFalse(bind.getPath().contains("docker.sock"), "no docker socket: " + bind.getPath());
        assertTrue(
            Set.of("/work", "/run/spb").contains(bind.getVolume().getPath()),
            bind.getVolume().getPath());
      }
      assertTrue(
          c.getConfig().getEnv() != null
              && Arrays.stream(c.getConfig().getEnv())
                  .noneMatch(e -> e.contains(bed.gateway.ownerToken)));
    }
    bed.gateway.api(
        "POST", "/api/v1/repos/probe/agent-jobs/" + id + "/cancel", bed.gateway.ownerToken, null);
    assertEquals("cancelled", bed.awaitFinished("probe", id).getString("exit_reason"));
  }

  @Test
  void workStopsAtItsCapAndTheJobEndsDiskLimit() throws Exception {
    String id =
        bed.submit("probe", "dd if=/dev/zero of=/work/fill bs=1M count=64", null).getString("id");
    JsonObject done = bed.awaitFinished("probe", id);
    assertEquals("disk_limit", done.getString("exit_reason"), bed.log(id));
  }

  @Test
  void memoryHogEndsOom() throws Exception {
    String id =
        bed.submit("probe", "head -c 600m /dev/zero | tail > /dev/null", null).getString("id");
    assertEquals("oom", bed.awaitFinished("probe", id).getString("exit_reason"), bed.log(id));
  }

  @Test
  void forkBombIsContained() throws Exception {
    String id =
        bed.submit("probe", "bomb() { bomb | bomb & }; bomb; sleep 3; echo survived", null)
            .getString("id");
    JsonObject done = bed.awaitFinished("probe", id);
    assertTrue(
        Set.of(
                    "ok",
                    "exit_code:1",
                    "exit_code:2",
                    "exit_code:126",
                    "exit_code:128",
                    "exit_code:254")
                .contains(done.getString("exit_reason"))
            || done.getString("exit_reason").startsWith("exit_code:"),
        done.encodePrettily());
    assertFalse(bed.containerExists(id));
    // The runner is still healthy: a following job runs normally.
    String next = bed.submit("probe", "true", null).getString("id");
    assertEquals("ok", bed.awaitFinished("probe", next).getString("exit_reason"));
  }

  @Test
  void sleepPastTheWallLimitEndsTimeout() throws Exception {
    String id = bed.submit("probe", "sleep 600", null).getString("id");
    JsonObject done = bed.awaitFinished("probe", id);
    assertEquals("timeout", done.getString("exit_reason"), bed.log(id));
    // The runner reports the end first and removes the container right after: give the removal its
    // moment.
    JobTestBed.awaitCondition(
        "the container of " + id + " is removed",
        Duration.ofSeconds(30),
        () -> !bed.containerExists(id));
  }

  private static HostListener keep(HostListener listener) {
    if (listener != null) {
      listeners.add(listener);
    }
    return listener;
  }

  private static Map<String, String> probes(String log) {
    return log.lines()
        .filter(l -> l.startsWith("PROBE "))
        .map(l -> l.substring(6).split("=", 2))
        .collect(Collectors.toMap(kv -> kv[0], kv -> kv.length > 1 ? kv[1] : "", (a, b) -> b));
  }
}
