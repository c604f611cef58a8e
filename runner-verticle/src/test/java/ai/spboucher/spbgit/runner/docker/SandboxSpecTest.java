package ai.spboucher.spbgit.runner.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SandboxSpecTest {

  private final SandboxSpec spec =
      SandboxSpec.builder()
          .image("spbgit/agent:latest")
          .jobId("j1")
          .runnerId("r1")
          .uid(2_000_000_000)
          .env(Map.of("SPB_JOB_TOKEN", "t", "NO_PROXY", "override-attempt"))
          .cpus(1.5)
          .memoryBytes(512L << 20)
          .pidsLimit(256)
          .workDir(Path.of("/w/j1/work"))
          .egressDir(Path.of("/w/j1/egress"))
          .workIsMounted(true)
          .diskBytes(64L << 20)
          .build();

  @Test
  void hostConfigIsLockedDown() {
    HostConfig host = spec.hostConfig();
    assertTrue(host.getReadonlyRootfs());
    assertEquals("none", host.getNetworkMode());
    assertTrue(Arrays.asList(host.getCapDrop()).contains(Capability.ALL));
    assertTrue(host.getSecurityOpts().contains("no-new-privileges"));
    assertEquals(512L << 20, host.getMemory());
    assertEquals(host.getMemory(), host.getMemorySwap());
    assertEquals(256L, host.getPidsLimit());
    assertEquals(1_500_000_000L, host.getNanoCPUs());
    assertFalse(Boolean.TRUE.equals(host.getPrivileged()));
  }

  @Test
  void mountsOnlyWorkAndTheEgressSocketReadOnly() {
    var binds = spec.hostConfig().getBinds();
    assertEquals(2, binds.length);
    var egress =
        Arrays.stream(binds)
            .filter(b -> b.getVolume().getPath().equals("/run/spb"))
            .findFirst()
            .get();
    assertEquals("ro", egress.getAccessMode().toString());
  }

  @Test
  void withoutAHostVolumeWorkIsADockerTmpfsOfTheDiskSize() {
    SandboxSpec unmounted =
        SandboxSpec.builder()
            .image("i")
            .jobId("j1")
            .runnerId("r1")
            .uid(70_000)
            .cpus(1)
            .memoryBytes(64L << 20)
            .pidsLimit(64)
            .workDir(Path.of("/w"))
            .egressDir(Path.of("/e"))
            .workIsMounted(false)
            .diskBytes(32L << 20)
            .build();
    String work = unmounted.hostConfig().getTmpFs().get("/work");
    assertTrue(work.contains("size=" + (32L << 20)), work);
    assertTrue(work.contains(",uid=70000,gid=70000,"), "owned by the sandbox uid: " + work);
    assertTrue(
        java.util.List.of(work.split(",")).contains("exec"),
        "Docker mounts a tmpfs noexec unless told exec; what the job builds must run: " + work);
    assertEquals("70000:70000", unmounted.user());
  }

  @Test
  void environmentRoutesToolsThroughTheProxy() {
    var env = spec.environment();
    assertTrue(env.contains("HTTP_PROXY=http://127.0.0.1:3128"));
    assertTrue(env.contains("https_proxy=http://127.0.0.1:3128"));
    assertTrue(
        env.contains("npm_config_proxy=http://127.0.0.1:3128"), "npm reads its own setting first");
    assertTrue(env.contains("SPB_JOB_TOKEN=t"));
    assertEquals(Map.of("spb.job", "j1", "spb.runner", "r1"), spec.labels());
  }
}
