package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.ModelCall;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.nats.EventPublisher;
import ai.spboucher.spbgit.testsupport.FakeProvider;
import ai.spboucher.spbgit.testsupport.GitCli;
import com.github.dockerjava.api.command.BuildImageResultCallback;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The runner's side of llm jobs, end to end with real Docker, NATS, gateway and runner: the model
 * endpoint in the container, the key that never enters it, the metered spend, the model and egress
 * events, the breach notice and the exit reasons. The agent is a scripted shell stand-in (curl
 * against the endpoint, git for the push) layered on the agent image, so these tests do not depend
 * on the Java agent; {@code LlmJobIT} runs that.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LlmRunnerIT {

  static final String KEY = "sk-runner-only-4f1d2c9a8b7e6d5c4b3a2910";
  static final String PROBE_IMAGE = "spbgit/agent-llm-probe:it";
  static final String MODEL = "gpt-test";

  @RegisterExtension
  static final LlmBed llm =
      LlmBed.withKey(KEY).wallLimit("60s").repo("demo", Map.of("README.md", "hello world\n"));

  @BeforeAll
  static void start() throws Exception {
    buildProbeImage(llm.tmp.resolve("probe-image"));
    llm.startRunner(
        "llm",
        MODEL,
        Map.of(
            "SPB_AGENT_IMAGE",
            PROBE_IMAGE,
            "SPB_MODELS",
            MODEL + ",gpt-alt",
            "SPB_MODEL_TOKEN_BUDGET",
            "100",
            "SPB_BREACH_GRACE",
            "4s"));
  }

  @AfterAll
  static void stop() throws Exception {
    // A child image left behind would keep the agent image's build from removing the image it
    // replaces.
    JobTestBed.dockerOutput("rmi", "--force", PROBE_IMAGE);
  }

  @Test
  void modelCallsGoThroughTheRunnerAndTheKeyNeverEntersTheContainer() throws Exception {
    llm.fake.then(
        llm.fake.openAiToolCall("list_files", "{\"path\":\".\"}", 30, 10),
        llm.fake.openAiText("Hello from the model", 40, 5));
    String id = jobId("happy");
    // The job waits while the test searches the whole container for the key (docker export of the
    // image's file system): a wall clock that leaves room for that on a loaded machine.
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, "happy", 180).build());

    JobTestBed.awaitCondition(
        "the probe wrote its file",
        Duration.ofSeconds(60),
        () -> llm.bed.log(id).contains("PROBE wrote="));
    String container = llm.bed.jobContainers(id).get(0).getId();
    assertKeyAbsentFromContainer(container);
    exec(container, "touch", "/work/.probe-go");

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(60));
    String log = llm.bed.log(id);
    assertEquals("ok", finished.getExitReason(), log);
    assertTrue(
        log.contains(
            "PROBE mode=llm provider=openai model=" + MODEL + " url=http://127.0.0.1:3129"),
        log);
    assertTrue(log.contains("PROBE call1=200") && log.contains("PROBE call2=200"), log);
    assertFalse(log.contains(KEY));
    String envKeys =
        log.lines().filter(l -> l.startsWith("PROBE env_keys=")).findFirst().orElseThrow();
    assertFalse(envKeys.contains("KEY"), envKeys);

    // The spend is the runner's own sum of what the provider reported.
    assertEquals("openai", finished.getProvider());
    assertEquals(MODEL, finished.getModel());
    assertEquals(70, finished.getInputTokens());
    assertEquals(15, finished.getOutputTokens());
    // The provider saw the key on every forwarded call, and the job's model.
    List<FakeProvider.Received> received =
        llm.fake.received().subList(llm.fake.received().size() - 2, llm.fake.received().size());
    for (FakeProvider.Received request : received) {
      assertEquals("Bearer " + KEY, request.header("authorization"));
      assertEquals(MODEL, request.json().path("model").asText());
    }

    List<ModelCall> calls = llm.bed.modelCalls(id);
    assertEquals(2, calls.size());
    assertEquals(List.of(200, 200), calls.stream().map(ModelCall::getStatus).toList());
    assertEquals(30, calls.get(0).getInputTokens());
    assertEquals(5, calls.get(1).getOutputTokens());
    assertTrue(
        calls.get(1).getRequest().toStringUtf8().contains("\"content\":\"read README.md\""),
        calls.get(1).getRequest().toStringUtf8());
    assertFalse(calls.get(0).getTruncated());

    List<EgressAttempt> egress = llm.bed.egressAttempts(id);
    List<EgressAttempt> viaModel =
        egress.stream().filter(e -> e.getVia().equals("model_endpoint")).toList();
    assertEquals(2, viaModel.size(), egress.toString());
    assertEquals("127.0.0.1", viaModel.get(0).getHost());
    assertEquals(llm.fake.port(), viaModel.get(0).getPort());
    assertTrue(viaModel.get(0).getAllowed());
    assertTrue(
        egress.stream()
            .anyMatch(
                e ->
                    e.getVia().equals("git_relay")
                        && e.getAllowed()
                        && e.getPort()
                            == java.net.URI.create(llm.bed.gateway.repoUrl("demo")).getPort()),
        "the clone and the push");
    assertTrue(
        egress.stream()
            .anyMatch(
                e ->
                    e.getHost().equals("forbidden.invalid")
                        && !e.getAllowed()
                        && !e.getFailure().isEmpty()),
        egress.toString());

    String proposal = "refs/agents/" + id + "/proposal";
    GitCli.Result diff =
        llm.bed.git.ok(
            llm.bed.gateway.repoDir("demo"), "diff", "main", proposal, "--", "greeting.txt");
    assertTrue(diff.output().contains("+Hello from the model"), diff.output());
    assertFalse(llm.bed.containerExists(id));
  }

  @Test
  void spendingTheBudgetWarnsTheAgentWhichPushesItsPartialWork() throws Exception {
    String id = jobId("budget");
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, "budget", 60).build());

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(90));
    String log = llm.bed.log(id);
    assertEquals("budget_exceeded", finished.getExitReason(), log);
    // The fake's default answer reports 10 + 5 tokens: seven calls reach the budget of 100, the
    // eighth is refused.
    assertTrue(log.contains("PROBE budget_status=429 calls=8 type=budget_exceeded"), log);
    assertTrue(log.contains("PROBE breach=budget_exceeded"), log);
    assertTrue(log.contains("breach notice budget_exceeded written"), log);
    assertEquals(70, finished.getInputTokens());
    assertEquals(35, finished.getOutputTokens());
    List<ModelCall> calls = llm.bed.modelCalls(id);
    assertEquals(8, calls.size());
    assertEquals(429, calls.get(7).getStatus());
    assertTrue(calls.get(7).getError().startsWith("budget_exceeded"), calls.get(7).getError());
    assertTrue(
        llm.bed
            .git
            .refs(llm.bed.gateway.repoDir("demo"))
            .contains("refs/agents/" + id + "/partial"));
  }

  @Test
  void anAgentIgnoringTheBudgetNoticeIsStoppedAfterTheGrace() throws Exception {
    String id = jobId("budget-ignored");
    long started = System.nanoTime();
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, "budget_ignored", 60).build());

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(90));
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
    String log = llm.bed.log(id);
    assertEquals("budget_exceeded", finished.getExitReason(), log);
    assertTrue(log.contains("grace period over: stopping the container"), log);
    assertTrue(
        seconds < 40,
        "stopped after the 4 s grace, long before the 60 s wall clock: " + seconds + " s");
  }

  @Test
  void theWallClockWarnsTheAgentBeforeTheJobEndsTimeout() throws Exception {
    String id = jobId("timeout");
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, "timeout", 20).build());

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(90));
    String log = llm.bed.log(id);
    assertEquals(
        "timeout",
        finished.getExitReason(),
        "the agent stopped within the grace, still a timeout\n" + log);
    String breach =
        log.lines().filter(l -> l.startsWith("PROBE breach=")).findFirst().orElseThrow();
    assertTrue(breach.startsWith("PROBE breach=timeout after="), breach);
    int after = Integer.parseInt(breach.substring(breach.indexOf("after=") + 6).trim());
    assertTrue(after >= 12 && after <= 18, "warned 4 s before the 20 s wall clock: " + breach);
    assertTrue(
        llm.bed
            .git
            .refs(llm.bed.gateway.repoDir("demo"))
            .contains("refs/agents/" + id + "/partial"));
  }

  @Test
  void theAgentsExitCodesNameProviderErrorAndStepLimit() throws Exception {
    llm.fake.then(FakeProvider.openAiError(500, "server_error", null, "The server had an error"));
    String providerError = jobId("provider");
    llm.bed.publish(
        llm.bed.request("demo", providerError, Mode.MODE_LLM, "provider_error", 60).build());
    StatusChange failed = llm.bed.awaitFinishedEvent(providerError, Duration.ofSeconds(60));
    assertEquals("provider_error", failed.getExitReason(), llm.bed.log(providerError));
    assertTrue(llm.bed.log(providerError).contains("PROBE status=500"));
    ModelCall call = llm.bed.modelCalls(providerError).get(0);
    assertEquals(500, call.getStatus());
    assertEquals("provider answered 500 (server_error)", call.getError());

    String steps = jobId("steps");
    llm.bed.publish(llm.bed.request("demo", steps, Mode.MODE_LLM, "step_limit", 60).build());
    assertEquals(
        "step_limit", llm.bed.awaitFinishedEvent(steps, Duration.ofSeconds(60)).getExitReason());

    String claimed = jobId("claimed");
    llm.bed.publish(
        llm.bed.request("demo", claimed, Mode.MODE_LLM, "stopped_without_breach", 60).build());
    assertEquals(
        "exit_code:75",
        llm.bed.awaitFinishedEvent(claimed, Duration.ofSeconds(60)).getExitReason(),
        "75 means nothing without the runner's own breach");
  }

  @Test
  void theBuiltinAgentIsGivenTheRequestsInstructionsInItsEnvironment() throws Exception {
    String given = jobId("instructions");
    llm.bed.publish(
        llm.bed
            .request("demo", given, Mode.MODE_LLM, "instructions", 60)
            .setInstructions("Run the tests.\nNo tabs.\n")
            .setInstructionsBlob("ab".repeat(20))
            .build());
    llm.bed.awaitFinishedEvent(given, Duration.ofSeconds(60));
    assertTrue(
        llm.bed.log(given).contains("PROBE instructions=Run the tests.|No tabs.|\n"),
        llm.bed.log(given));

    String none = jobId("noinstructions");
    llm.bed.publish(llm.bed.request("demo", none, Mode.MODE_LLM, "instructions", 60).build());
    llm.bed.awaitFinishedEvent(none, Duration.ofSeconds(60));
    assertTrue(llm.bed.log(none).contains("PROBE instructions=unset\n"), llm.bed.log(none));
  }

  @Test
  void aJobAskingForAModelTheRunnerDoesNotOfferIsRefused() throws Exception {
    String id = jobId("model");
    llm.bed.publish(
        llm.bed.request("demo", id, Mode.MODE_LLM, "happy", 60).setModel("gpt-unlisted").build());
    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(30));
    assertEquals("runner_error", finished.getExitReason());
    assertTrue(finished.getDetail().contains("gpt-unlisted is not offered"), finished.getDetail());
    assertEquals(
        List.of(JobStatus.FINISHED),
        llm.bed.statusEvents(id).stream().map(e -> e.getStatus().getStatus()).toList(),
        "refused before any container");
  }

  @Test
  void aRunnerWithoutAProviderRefusesLlmJobsAtOnce() throws Exception {
    String id = jobId("noprovider");
    RunnerConfig plain =
        RunnerConfig.from(RunnerConfig.fromEnvironment(llm.bed.runnerEnv("plain")));
    try (DockerSandbox docker = new DockerSandbox(plain.dockerHost());
        Connection nats = Nats.connect(llm.bed.nats.url())) {
      JobRequest request = llm.bed.request("demo", id, Mode.MODE_LLM, "happy", 60).build();
      // No Vert.x: the job is refused before any of its sockets is opened.
      new JobExecution(
              new JobContext(
                  null,
                  plain,
                  docker,
                  null,
                  null,
                  request,
                  "",
                  new EventPublisher(nats.jetStream(), id, Clock.systemUTC()),
                  Clock.systemUTC(),
                  null,
                  Map.of(
                      Subjects.DEFAULT_IMAGE,
                      new ImageCatalogue.Offered(Subjects.DEFAULT_IMAGE, plain.agentImage(), "")),
                  new JobCache(plain.workRoot().resolve("cache"), 0)))
          .run();
    }
    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(10));
    assertEquals("runner_error", finished.getExitReason());
    assertEquals("this runner has no model provider configured", finished.getDetail());
    assertTrue(llm.bed.jobContainers(id).isEmpty());
  }

  @Test
  void execJobsPublishTheirEgressAttemptsAndNoSpend() throws Exception {
    JsonObject job =
        llm.bed.submit("demo", "curl -s -o /dev/null http://forbidden.invalid:8080/ ; true", null);
    String id = job.getString("id");
    llm.bed.awaitFinished("demo", id);
    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(10));
    assertEquals("ok", finished.getExitReason(), llm.bed.log(id));
    assertEquals("", finished.getProvider());
    assertEquals(0, finished.getInputTokens() + finished.getOutputTokens());
    List<EgressAttempt> egress = llm.bed.egressAttempts(id);
    assertTrue(
        egress.stream().anyMatch(e -> e.getAllowed() && e.getVia().equals("git_relay")),
        egress.toString());
    EgressAttempt refused = egress.stream().filter(e -> !e.getAllowed()).findFirst().orElseThrow();
    assertEquals("forbidden.invalid", refused.getHost());
    assertEquals(8080, refused.getPort());
    assertEquals("GET", refused.getMethod());
    assertTrue(refused.getStartedEpochMs() > 0);
    assertEquals(List.of(), llm.bed.modelCalls(id));
  }

  // --- helpers
  // -------------------------------------------------------------------------------------------------

  private static String jobId(String name) {
    return name + "-" + Long.toString(System.nanoTime(), 36);
  }

  /**
   * The key in the container's configuration, processes, /work, /tmp and whole file system:
   * nowhere.
   */
  private static void assertKeyAbsentFromContainer(String container) throws Exception {
    String processes = JobTestBed.assertAbsentFromContainer(container, KEY);
    assertTrue(processes.contains("socat"), "the relays were listed: " + processes);
    String env = JobTestBed.dockerOutput("inspect", "--format", "{{json .Config.Env}}", container);
    assertTrue(env.contains("SPB_MODEL_URL=http://127.0.0.1:3129"), env);
  }

  private static void exec(String container, String... command) throws Exception {
    List<String> args =
        new java.util.ArrayList<>(List.of("exec", "-u", JobTestBed.SANDBOX_USER, container));
    args.addAll(List.of(command));
    JobTestBed.dockerOutput(args.toArray(String[]::new));
  }

  /** The agent image with the scripted stand-in as its entrypoint; built locally, never pulled. */
  private static void buildProbeImage(Path dir) throws Exception {
    Files.createDirectories(dir);
    Path script = dir.resolve("llm-probe");
    Files.writeString(script, PROBE_SCRIPT);
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.writeString(
        dir.resolve("Dockerfile"),
        "FROM "
            + JobTestBed.IMAGE
            + "\n"
            + "COPY llm-probe /usr/local/bin/llm-probe\n"
            + "ENTRYPOINT [\"/usr/local/bin/llm-probe\"]\n");
    try (DockerSandbox docker = new DockerSandbox("unix:///var/run/docker.sock")) {
      docker
          .client()
          .buildImageCmd(dir.toFile())
          .withTags(Set.of(PROBE_IMAGE))
          .withPull(false)
          .exec(new BuildImageResultCallback())
          .awaitImageId(120, TimeUnit.SECONDS);
    }
  }

  /** The stand-in agent. SPB_TASK names the scenario; PROBE lines report what it saw. */
  static final String PROBE_SCRIPT =
      """
      #!/bin/sh
      set -u
      [ "$SPB_MODE" = llm ] || exec /usr/local/bin/spb-agent
      say() { printf 'PROBE %s\\n' "$*"; }
      start=$(date +%s)
      relay() {
        socat "TCP-LISTEN:$2,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$1" &
        listening=$(printf ' 0100007F:%04X 00000000:0000 0A ' "$2")
        until grep -q "$listening" /proc/net/tcp; do sleep 0.1; done
      }
      relay /run/spb/egress.sock 3128
      relay /run/spb/model.sock 3129
      relay /run/spb/git.sock 3130
      say "mode=$SPB_MODE provider=$SPB_MODEL_PROVIDER model=$SPB_MODEL url=$SPB_MODEL_URL"
      say "env_keys=$(env | cut -d= -f1 | sort | tr '\\n' ',')"
      export HOME=/work/home GIT_TERMINAL_PROMPT=0
      mkdir -p "$HOME"
      git config --global user.name probe
      git config --global user.email probe@spbgit.invalid
      git config --global http.http://127.0.0.1:3130/.proxy ""
      git clone -q --branch "$SPB_BASE_REF" "$SPB_CLONE_URL" /work/repo || exit 92
      cd /work/repo
      say "refused_egress=$(curl -s -o /dev/null -w '%{http_code}' http://forbidden.invalid/)"

      call() {
        curl -s --noproxy '*' -o /tmp/answer -w '%{http_code}' -H 'content-type: application/json' \\
          --data "{\\"model\\":\\"$SPB_MODEL\\",\\"messages\\":[{\\"role\\":\\"user\\",\\"content\\":\\"$1\\"}]}" \\
          "$SPB_MODEL_URL/v1/chat/completions"
      }
      push() {
        git add -A
        git commit -q -m "$SPB_TASK" || true
        git push -q "$SPB_CLONE_URL" "HEAD:refs/agents/$SPB_JOB_ID/$1" && say "pushed=$1"
      }
      await_breach() {
        until [ -f /work/.spb/breach ]; do sleep 0.2; done
        say "breach=$(cat /work/.spb/breach) after=$(( $(date +%s) - start ))"
      }

      case "$SPB_TASK" in
        happy)
          say "call1=$(call 'list the files')"
          say "call2=$(call 'read README.md')"
          content=$(sed -n 's/.*"content":"\\([^"]*\\)".*/\\1/p' /tmp/answer)
          printf '%s\\n' "$content" > greeting.txt
          say "wrote=$content"
          until [ -f /work/.probe-go ]; do sleep 0.2; done
          push proposal
          exit 0 ;;
        budget)
          n=0
          while :; do
            n=$((n + 1))
            status=$(call "step $n")
            [ "$status" = 200 ] || break
          done
          say "budget_status=$status calls=$n type=$(sed -n 's/.*"type":"\\([a-z_]*\\)".*/\\1/p' /tmp/answer)"
          await_breach
          echo "partial work" > partial.txt
          push partial
          exit 75 ;;
        budget_ignored)
          while [ "$(call more)" = 200 ]; do :; done
          say "ignoring the breach"
          sleep 600 ;;
        timeout)
          await_breach
          echo "partial work" > partial.txt
          push partial
          exit 75 ;;
        provider_error)
          say "status=$(call hello)"
          exit 76 ;;
        step_limit) exit 77 ;;
        instructions)
          say "instructions=$(printf '%s' "${SPB_INSTRUCTIONS-unset}" | tr '\\n' '|')"
          exit 77 ;;
        stopped_without_breach) exit 75 ;;
      esac
      exit 1
      """;
}
