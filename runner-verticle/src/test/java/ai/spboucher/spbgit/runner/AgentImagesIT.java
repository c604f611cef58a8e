package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.docker.WorkVolume;
import ai.spboucher.spbgit.testsupport.Prerequisites;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image catalogue that docker/job-image/build.sh makes: each variant's toolchain works inside
 * the sandbox as the runner starts it (read-only root, no network, no capabilities, the sandbox
 * uid, a size-capped {@code /work}), and the variants really differ. Each check runs a shell script
 * in place of the entrypoint, in a container made from the runner's own {@link SandboxSpec}. The
 * images are built beforehand ({@code ./spbgit test} does it); a missing one fails in CI and skips
 * elsewhere.
 */
class AgentImagesIT {

  private static final int UID = RunnerConfig.DEFAULT_SANDBOX_UID;

  /**
   * What every variant carries for the runner: the entrypoint, the llm-mode agent and its JRE, git,
   * socat.
   */
  private static final String AGENT_PARTS =
      """
      test -x /usr/local/bin/spb-agent && test -r /opt/spb/agent.jar && command -v java && command -v git \
      && command -v socat && echo agent-parts-ok
      """;

  @TempDir static Path tmp;
  static DockerSandbox docker;

  @BeforeAll
  static void connect() {
    JobTestBed.requireDocker();
    docker = new DockerSandbox("unix:///var/run/docker.sock");
  }

  @AfterAll
  static void close() throws Exception {
    if (docker != null) {
      docker.close();
    }
  }

  @Test
  void baseHasGitAndTheAgentButNoPythonOrNode() throws Exception {
    String out =
        runIn(
            "base",
            AGENT_PARTS
                + """
        git --version
        for tool in python3 node npm pip3; do command -v $tool && echo "has $tool"; done
        echo done
        """);
    assertTrue(out.contains("agent-parts-ok"), out);
    assertTrue(out.contains("git version 2."), out);
    assertTrue(
        out.contains("done") && !out.contains("has "),
        "base must offer no other toolchain: " + out);
  }

  @Test
  void pythonMakesAVenvWithPipAndRunsPytestOffline() throws Exception {
    String out =
        runIn(
            "python",
            AGENT_PARTS
                + """
        set -e
        python3 -m venv /work/.venv
        /work/.venv/bin/pip --version
        env | grep '^PIP_' && echo "pip environment set"
        pip3 config list | grep . && echo "pip configured"
        mkdir /work/repo && cd /work/repo
        printf 'def test_sum():\\n    assert 1 + 1 == 2\\n' > test_sum.py
        python3 -m pytest -q -p no:cacheprovider
        python3 -m venv --system-site-packages /work/with-system
        /work/with-system/bin/python -m pytest -q -p no:cacheprovider
        echo python-ok
        """);
    assertTrue(
        out.contains("pip 23.") && out.contains("/work/.venv/"), "the venv's own pip: " + out);
    assertTrue(
        !out.contains("pip environment set") && !out.contains("pip configured"),
        "no pip index is configured that the sandbox cannot reach: " + out);
    assertTrue(out.contains("1 passed"), out);
    assertTrue(out.contains("python-ok"), out);
  }

  @Test
  void nodeRunsNodeAndNpmOffline() throws Exception {
    String out =
        runIn(
            "node",
            AGENT_PARTS
                + """
        set -e
        node -e 'console.log("node says " + (6 * 7))'
        echo "npm $(npm --version)"
        mkdir /work/repo && cd /work/repo
        npm init -y > /dev/null
        npm pkg set scripts.test="node -e 'process.exit(0)'"
        npm test > /dev/null
        echo node-ok
        """);
    assertTrue(out.contains("node says 42"), out);
    assertTrue(out.matches("(?s).*npm \\d+\\.\\d+\\.\\d+.*"), out);
    assertTrue(out.contains("node-ok"), out);
  }

  /**
   * Runs {@code script} with sh in variant's image under the runner's hardening; returns stdout and
   * stderr.
   */
  private static String runIn(String variant, String script) throws Exception {
    String image = imageOf(variant);
    requireImage(image, variant);
    Path jobDir = Files.createDirectories(tmp.resolve(variant));
    Path egress = Files.createDirectories(jobDir.resolve("egress"));
    WorkVolume work = new WorkVolume(jobDir.resolve("work"), 512L << 20, UID);
    boolean mounted = work.mount();
    SandboxSpec spec =
        SandboxSpec.builder()
            .image(image)
            .jobId("images-" + variant)
            .runnerId("agent-images-it")
            .uid(UID)
            .cpus(1.0)
            .memoryBytes(1L << 30)
            .pidsLimit(256)
            .workDir(work.dir())
            .egressDir(egress)
            .workIsMounted(mounted)
            .diskBytes(512L << 20)
            .build();
    String id =
        docker
            .client()
            .createContainerCmd(image)
            .withLabels(spec.labels())
            .withEnv(spec.environment())
            .withUser(spec.user())
            .withWorkingDir("/work")
            .withNetworkDisabled(true)
            .withHostConfig(spec.hostConfig())
            .withEntrypoint("sh", "-c", script)
            .exec()
            .getId();
    try {
      docker.start(id);
      Long code = docker.awaitExit(id, Duration.ofMinutes(2));
      String out = output(id);
      assertEquals(0L, code, variant + " script failed:\n" + out);
      return out;
    } finally {
      docker.remove(id);
      work.release();
    }
  }

  /**
   * The image build.sh names for a variant: base is {@code SPB_AGENT_IMAGE}, python its repository
   * + "-python".
   */
  static String imageOf(String variant) {
    String base = JobTestBed.IMAGE;
    if (variant.equals("base")) {
      return base;
    }
    int slash = base.lastIndexOf('/');
    int colon = base.lastIndexOf(':');
    return colon > slash
        ? base.substring(0, colon) + "-" + variant + base.substring(colon)
        : base + "-" + variant + ":latest";
  }

  private static void requireImage(String image, String variant) {
    try {
      docker.check(image, UID);
      String label =
          docker
              .client()
              .inspectImageCmd(image)
              .exec()
              .getConfig()
              .getLabels()
              .get("spb.agent.variant");
      assertEquals(variant, label, image + " is labelled as another variant");
    } catch (IllegalStateException e) {
      String why = e.getMessage() + " (variant " + variant + ")";
      Prerequisites.unmet(why);
    }
  }

  private static String output(String id) throws InterruptedException {
    StringBuilder out = new StringBuilder();
    docker
        .client()
        .logContainerCmd(id)
        .withStdOut(true)
        .withStdErr(true)
        .exec(
            new ResultCallback.Adapter<Frame>() {
              @Override
              public void onNext(Frame frame) {
                synchronized (out) {
                  out.append(new String(frame.getPayload(), StandardCharsets.UTF_8));
                }
              }
            })
        .awaitCompletion(30, java.util.concurrent.TimeUnit.SECONDS);
    synchronized (out) {
      return out.toString();
    }
  }
}
