package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.gateway.auth.RunnerKeys;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.gateway.nats.JobBusSigner;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Signatures;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.trust.GatewayKeys;
import ai.spboucher.spbgit.runner.trust.JobRequestCheck;
import ai.spboucher.spbgit.runner.trust.RunnerKey;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.NatsServer;
import ai.spboucher.spbgit.testsupport.Prerequisites;
import ai.spboucher.spbgit.testsupport.Stack;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.DeliverPolicy;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Everything a job needs, for real: nats-server, a gateway and runners in this JVM, the Docker
 * engine and the locally built agent image. Tests fail, not skip, when {@code CI=true} and Docker
 * is missing.
 *
 * <p>The bed's runners trust the gateway's job-bus keys ({@code SPB_GATEWAY_KEYS}) and share one
 * runner key, registered with the gateway when the bed starts, so jobs queued before any runner
 * starts are sealed to them too; a runner given a key of its own is registered as it starts. What
 * the bed publishes by hand ({@link #publish}) it signs and seals as the gateway does.
 */
public final class JobTestBed implements AutoCloseable {

  public static final String IMAGE =
      System.getenv().getOrDefault("SPB_AGENT_IMAGE", "spbgit/agent:latest");

  /**
   * The user job containers run as: the runner's default {@code SPB_SANDBOX_UID}, which the bed
   * does not set.
   */
  public static final String SANDBOX_USER =
      RunnerConfig.DEFAULT_SANDBOX_UID + ":" + RunnerConfig.DEFAULT_SANDBOX_UID;

  public final Path tmp;

  /** The NATS server; null when the bed runs on NATS started elsewhere (see {@link #onNats}). */
  public final NatsServer nats;

  /**
   * What the gateway, the runners and the bed's own clients connect to: one URL or a
   * comma-separated list.
   */
  private final String natsUrl;

  /** The running gateway; replaced by {@link #startGateway} after {@link #stopGateway}. */
  public TestGateway gateway;

  public final GitCli git;

  /** What the bed brought up: NATS (unless started elsewhere), the gateway, the runners. */
  private final Stack stack;

  /** The runners {@link #startRunner} started, by the Vert.x it handed out. */
  private final Map<Vertx, InJvmRunner> runners = new ConcurrentHashMap<>();

  private final JsonObject gatewayOverrides;

  /** The key the bed's runners share unless given their own ({@code SPB_RUNNER_KEY}). */
  private final RunnerKey runnerKey;

  /** The tokens {@link #request} minted, by job id, for {@link #publish} to seal. */
  private final Map<String, String> tokens = new ConcurrentHashMap<>();

  private JobTestBed(Path tmp, Stack stack, JsonObject gatewayOverrides) throws Exception {
    this.tmp = tmp;
    this.stack = stack;
    this.nats = stack.nats();
    this.natsUrl = stack.natsUrl();
    this.gateway = stack.gateway(TestGateway.class);
    this.git = stack.git();
    this.gatewayOverrides = gatewayOverrides;
    this.runnerKey = RunnerKey.loadOrCreate(tmp.resolve("runner-key.pem"));
    registerRunnerKey("bed", runnerKey.publicFile());
  }

  /** A bed on {@code stack}'s gateway; the stack is closed if the bed cannot be made. */
  private static JobTestBed on(Path tmp, Stack.Builder stack, JsonObject gatewayOverrides)
      throws Exception {
    Stack started = stack.gatewayDir("gateway").gateway(gatewayOverrides).start();
    try {
      return new JobTestBed(tmp, started, gatewayOverrides);
    } catch (Exception | Error e) {
      started.close();
      throw e;
    }
  }

  /**
   * Starts NATS and a gateway whose jobs get {@code wallLimit}; add runners with {@link
   * #startRunner}.
   */
  public static JobTestBed start(Path tmp, String wallLimit) throws Exception {
    return start(tmp, wallLimit, new JsonObject());
  }

  /**
   * Like {@link #start(Path, String)}, with {@code gatewayOverrides} on top of the wall limit:
   * {@code model} and {@code models} (as {@code SPB_MODEL} and {@code SPB_MODELS}) let the API
   * create llm jobs.
   */
  public static JobTestBed start(Path tmp, String wallLimit, JsonObject gatewayOverrides)
      throws Exception {
    requireDocker();
    JsonObject overrides =
        new JsonObject().put("jobWallLimit", wallLimit).mergeIn(gatewayOverrides);
    return on(tmp, Stack.builder(tmp).nats(), overrides);
  }

  /**
   * A gateway on NATS the caller started and closes (a cluster, say), at {@code natsUrl} (several
   * servers comma-separated), with {@code gatewayOverrides} on top of the wall limit.
   */
  public static JobTestBed onNats(
      Path tmp, String natsUrl, String wallLimit, JsonObject gatewayOverrides) throws Exception {
    requireDocker();
    JsonObject overrides =
        new JsonObject().put("jobWallLimit", wallLimit).mergeIn(gatewayOverrides);
    return on(tmp, Stack.builder(tmp).natsAt(natsUrl), overrides);
  }

  /** The NATS URL (or comma-separated URLs) everything in this bed connects to. */
  public String natsUrl() {
    return natsUrl;
  }

  static void requireDocker() {
    try (var docker =
        new ai.spboucher.spbgit.runner.docker.DockerSandbox("unix:///var/run/docker.sock")) {
      docker.check(IMAGE, RunnerConfig.DEFAULT_SANDBOX_UID);
    } catch (Exception e) {
      Prerequisites.unmet("Docker with image " + IMAGE + ": " + e.getMessage());
    }
  }

  /**
   * Requires the Java agent ({@code /opt/spb/agent.jar}) in {@code image}, which llm jobs run:
   * fails in CI, skips elsewhere, when it is missing.
   */
  public static void requireLlmAgent(String image) throws Exception {
    requireDocker();
    Process probe =
        new ProcessBuilder(
                "docker",
                "run",
                "--rm",
                "--network",
                "none",
                "--entrypoint",
                "test",
                image,
                "-r",
                "/opt/spb/agent.jar")
            .redirectErrorStream(true)
            .start();
    probe.getInputStream().readAllBytes();
    if (probe.waitFor() != 0) {
      String why =
          "image "
              + image
              + " has no /opt/spb/agent.jar (build it with docker/job-image/build.sh, or set "
              + "SPB_LLM_AGENT_IMAGE)";
      Prerequisites.unmet(why);
    }
  }

  /**
   * A runner in this JVM; {@code env} overrides its {@code SPB_*} settings. A runner key of its own
   * ({@code SPB_RUNNER_KEY}) is registered with the gateway once the runner has made it.
   */
  public Vertx startRunner(String id, Map<String, String> env) {
    Map<String, String> all = new HashMap<>(runnerEnv(id));
    all.putAll(env);
    InJvmRunner runner;
    try {
      runner = (InJvmRunner) stack.startRunner(id, all);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    Vertx vertx = runner.vertx();
    runners.put(vertx, runner);
    RunnerConfig config = runner.config();
    if (!config.runnerKey().equals(runnerKey.privateFile())) {
      try {
        registerRunnerKey(id, EcKeys.publicFileBeside(config.runnerKey()));
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return vertx;
  }

  /**
   * Authorizes a runner's public key with the gateway, as an operator does: copies it into the
   * gateway's runner keys as {@code <name>.pub.pem}.
   */
  public void registerRunnerKey(String name, Path publicKey) throws java.io.IOException {
    Path runnerKeys = Files.createDirectories(gatewayKeys().resolve("runners"));
    Files.copy(
        publicKey,
        runnerKeys.resolve(name + ".pub.pem"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  /** The gateway's {@code keys/} directory. */
  public Path gatewayKeys() {
    return gateway.dataDir.resolve("keys");
  }

  /**
   * Stops a runner {@link #startRunner} started, before the bed closes (its running jobs end
   * runner_lost).
   */
  public void stopRunner(Vertx runner) {
    InJvmRunner started = runners.remove(runner);
    if (started != null) {
      try {
        stack.stopRunner(started);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }

  public Map<String, String> runnerEnv(String id) {
    Map<String, String> env = new HashMap<>();
    env.put("SPB_NATS_URL", natsUrl);
    env.put("SPB_RUNNER_ID", id);
    env.put("SPB_AGENT_IMAGE", IMAGE);
    env.put("SPB_RUNNER_WORK_DIR", tmp.resolve("runner-" + id).toString());
    env.put("SPB_LIMIT_MEMORY", "256m");
    env.put("SPB_LIMIT_DISK", "32m");
    env.put("SPB_LIMIT_CPUS", "1");
    env.put("SPB_LIMIT_PIDS", "128");
    env.put("SPB_GATEWAY_KEYS", gatewayKeys().resolve(SigningKey.JOB_BUS_DIR).toString());
    env.put("SPB_RUNNER_KEY", runnerKey.privateFile().toString());
    // Whichever of the gateway and a runner connects first creates the job consumer: both agree.
    String ackWait = gatewayOverrides.getString("jobAckWait");
    if (ackWait != null) {
      env.put("SPB_JOB_ACK_WAIT", ackWait);
    }
    return env;
  }

  /** Creates {@code repo} with one commit on main holding {@code files}. */
  public void createRepo(String repo, Map<String, String> files) throws Exception {
    gateway.createRepo(repo);
    Path work = Files.createDirectories(tmp.resolve("seed-" + repo));
    git.ok(work, "init", "-q", "-b", "main");
    for (var file : files.entrySet()) {
      Path path = work.resolve(file.getKey());
      Files.createDirectories(path.getParent());
      Files.writeString(path, file.getValue());
    }
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "seed");
    git.ok(work, "push", "-q", gateway.pushUrl(repo, gateway.ownerToken), "main");
  }

  /** Starts a job; returns its JSON. */
  public JsonObject submit(String repo, String exec, String testCommand) throws Exception {
    JsonObject body = new JsonObject().put("task", "test job").put("exec", exec);
    if (testCommand != null) {
      body.put("test_command", testCommand);
    }
    HttpResponse<String> r =
        gateway.api(
            "POST", "/api/v1/repos/" + repo + "/agent-jobs", gateway.ownerToken, body.encode());
    assertEquals(201, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }

  /** Asks the gateway to create a job from {@code body} as the owner; the answer as it came. */
  public HttpResponse<String> createJob(String repo, JsonObject body) throws Exception {
    return gateway.api(
        "POST", "/api/v1/repos/" + repo + "/agent-jobs", gateway.ownerToken, body.encode());
  }

  public JsonObject job(String repo, String id) throws Exception {
    return new JsonObject(
        gateway
            .api("GET", "/api/v1/repos/" + repo + "/agent-jobs/" + id, gateway.ownerToken, null)
            .body());
  }

  /** Waits until the job reaches {@code status}; fails with its state and log on timeout. */
  public JsonObject await(String repo, String id, String status, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    JsonObject job = job(repo, id);
    while (System.nanoTime() < deadline) {
      job = job(repo, id);
      if (status.equals(job.getString("status"))) {
        return job;
      }
      Thread.sleep(200);
    }
    return fail(
        "job "
            + id
            + " did not become "
            + status
            + " within "
            + timeout
            + ": "
            + job.encodePrettily()
            + "\nlog:\n"
            + log(id));
  }

  public JsonObject awaitFinished(String repo, String id) throws Exception {
    return await(repo, id, "finished", Duration.ofSeconds(120));
  }

  /**
   * The job's whole log as published on NATS, in sequence order; asserts the sequence has no gap.
   */
  public String log(String jobId) throws Exception {
    StringBuilder out = new StringBuilder();
    try (Connection connection = connect()) {
      JetStreamSubscription sub = readFromStart(connection, Subjects.logEvents(jobId));
      long expected = 1;
      while (true) {
        List<Message> batch = sub.fetch(500, Duration.ofMillis(500));
        if (batch.isEmpty()) {
          break;
        }
        for (Message m : batch) {
          JobEvent event = JobEvent.parseFrom(m.getData());
          assertEquals(expected++, event.getSequence(), "log sequence of job " + jobId);
          out.append(event.getLog().getData().toStringUtf8());
          m.ack();
        }
      }
    }
    return out.toString();
  }

  /**
   * A connection of the bed's own, to read what the product published. JetStream requests get 10 s
   * (the client's default is 2 s): on a cluster that has just lost a node, on a busy machine,
   * answers can take longer.
   */
  private Connection connect() throws Exception {
    return Nats.connect(
        new io.nats.client.Options.Builder()
            .server(natsUrl)
            .connectionTimeout(Duration.ofSeconds(10))
            .errorListener(new io.nats.client.ErrorListener() {})
            .build());
  }

  /**
   * A pull consumer reading {@code subject} from the start of the events stream. Created again when
   * JetStream does not answer: for a while after a cluster node dies, the server can still place a
   * new consumer on it.
   */
  private static JetStreamSubscription readFromStart(Connection connection, String subject)
      throws Exception {
    PullSubscribeOptions options =
        PullSubscribeOptions.builder().stream(Subjects.EVENTS_STREAM)
            .configuration(
                io.nats.client.api.ConsumerConfiguration.builder()
                    .deliverPolicy(DeliverPolicy.All)
                    .build())
            .build();
    for (int attempt = 1; ; attempt++) {
      try {
        return connection.jetStream().subscribe(subject, options);
      } catch (java.io.IOException e) {
        if (attempt == 8) {
          throw e;
        }
      }
    }
  }

  /** Whether any container of this job still exists. */
  public boolean containerExists(String jobId) {
    try (var docker =
        new ai.spboucher.spbgit.runner.docker.DockerSandbox("unix:///var/run/docker.sock")) {
      docker.client().inspectContainerCmd("spb-job-" + jobId).exec();
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Closes the gateway (its HTTP server, NATS consumer and audit log), keeping its data directory.
   */
  public void stopGateway() {
    stack.stopGateway();
  }

  /** Starts a gateway again on the same data directory and settings; it listens on a new port. */
  public void startGateway() throws Exception {
    startGateway(Clock.systemUTC());
  }

  /** Like {@link #startGateway()}, with a gateway that reads the time from {@code clock}. */
  public void startGateway(Clock clock) throws Exception {
    stack.startGateway(clock);
    gateway = stack.gateway(TestGateway.class);
  }

  /** {@link #stopGateway} then {@link #startGateway(Clock)}. */
  public void restartGatewayWith(Clock clock) throws Exception {
    stopGateway();
    startGateway(clock);
  }

  /** {@link #stopGateway} then {@link #startGateway}. */
  public void restartGateway() throws Exception {
    stopGateway();
    startGateway();
  }

  /** The gateway's audit log file. */
  public Path auditLog() {
    return gateway.dataDir.resolve("agent-jobs.jsonl");
  }

  /** The job's audit entries, oldest first, as the API serves them. */
  public List<JsonObject> auditEntries(String jobId) throws Exception {
    HttpResponse<String> r =
        gateway.api("GET", "/api/v1/agent-jobs?job=" + jobId, gateway.ownerToken, null);
    assertEquals(200, r.statusCode(), r.body());
    return new JsonArray(r.body()).stream().map(e -> (JsonObject) e).toList();
  }

  /** The names of the job's audit events, oldest first. */
  public List<String> auditEvents(String jobId) throws Exception {
    return auditEntries(jobId).stream().map(e -> e.getString("event")).toList();
  }

  /** Asks the gateway to cancel the job. */
  public HttpResponse<String> cancel(String repo, String id) throws Exception {
    return gateway.api(
        "POST",
        "/api/v1/repos/" + repo + "/agent-jobs/" + id + "/cancel",
        gateway.ownerToken,
        null);
  }

  /** Every status event runners published for the job, in stream order, read straight from NATS. */
  public List<JobEvent> statusEvents(String jobId) throws Exception {
    List<JobEvent> events = new ArrayList<>();
    try (Connection connection = connect()) {
      JetStreamSubscription sub = readFromStart(connection, Subjects.statusEvents(jobId));
      while (true) {
        List<Message> batch = sub.fetch(100, Duration.ofMillis(500));
        if (batch.isEmpty()) {
          return events;
        }
        for (Message m : batch) {
          events.add(JobEvent.parseFrom(m.getData()));
          m.ack();
        }
      }
    }
  }

  /**
   * Publishes a hand-built request straight to the queue, as the gateway would (for modes the
   * gateway does not send yet): with the token {@link #request} minted for it sealed to the
   * registered runner keys, signed with the gateway's job-bus key ({@link #signed}). The gateway
   * does not know such a job: read its events from NATS ({@link #awaitFinishedEvent}).
   */
  public void publish(ai.spboucher.spbgit.proto.JobRequest request) throws Exception {
    JobBusSigner.Signed signed = signed(request);
    try (Connection connection = connect()) {
      connection
          .jetStream()
          .publish(
              Subjects.jobRequests(request),
              signed.headers(),
              signed.data(),
              io.nats.client.PublishOptions.builder().messageId(request.getJobId()).build());
    }
  }

  /**
   * {@code request} as {@link #publish} publishes it (see {@link
   * #signed(ai.spboucher.spbgit.proto.JobRequest, String)}).
   */
  public JobBusSigner.Signed signed(ai.spboucher.spbgit.proto.JobRequest request) throws Exception {
    return signed(request, tokens.get(request.getJobId()));
  }

  /**
   * {@code request} as the gateway publishes it: {@code jobToken} sealed to every runner key
   * registered with the gateway, signed with the gateway's job-bus key; with a null token, only
   * signed (no runner can open a token then).
   */
  public JobBusSigner.Signed signed(ai.spboucher.spbgit.proto.JobRequest request, String jobToken)
      throws Exception {
    SigningKey jobBusKey = SigningKey.loadOrCreate(SigningKey.KeyFiles.jobBus(gatewayKeys()));
    if (jobToken == null) {
      byte[] data = request.toByteArray();
      io.nats.client.impl.Headers headers = new io.nats.client.impl.Headers();
      headers.put(
          Signatures.HEADER,
          DetachedJws.sign(
              Signatures.JOB_REQUEST, jobBusKey.keyId(), jobBusKey.privateKey(), data));
      return new JobBusSigner.Signed(data, headers);
    }
    return new JobBusSigner(jobBusKey, new RunnerKeys(gatewayKeys().resolve("runners")))
        .request(request, jobToken);
  }

  /** The job token sealed to the bed's shared runner key in {@code request}. */
  public String jobToken(ai.spboucher.spbgit.proto.JobRequest request) throws Exception {
    return new JobRequestCheck(
            GatewayKeys.load(gatewayKeys().resolve(SigningKey.JOB_BUS_DIR), Clock.systemUTC()),
            runnerKey,
            Clock.systemUTC())
        .jobToken(request);
  }

  /**
   * A request for {@code repo} whose job gets a fresh job token (sealed when it is published), the
   * given mode and task, a wall clock of {@code wallSeconds} and a deadline 5 minutes after it;
   * callers add what else they need.
   */
  public ai.spboucher.spbgit.proto.JobRequest.Builder request(
      String repo, String jobId, ai.spboucher.spbgit.proto.Mode mode, String task, long wallSeconds)
      throws Exception {
    long now = System.currentTimeMillis();
    tokens.put(jobId, gateway.jobToken(repo, jobId, wallSeconds + 420));
    return ai.spboucher.spbgit.proto.JobRequest.newBuilder()
        .setJobId(jobId)
        .setRepo(repo)
        .setCloneUrl(gateway.repoUrl(repo))
        .setBaseRef("main")
        .setTask(task)
        .setMode(mode)
        .setLimits(ai.spboucher.spbgit.proto.Limits.newBuilder().setWallSeconds(wallSeconds))
        .setDeadlineEpochMs(now + (wallSeconds + 300) * 1000)
        .setCreatedEpochMs(now);
  }

  /**
   * Every event published on {@code subject} (a job's status, log, model or egress subject), in
   * stream order.
   */
  public List<JobEvent> events(String subject) throws Exception {
    List<JobEvent> events = new ArrayList<>();
    try (Connection connection = connect()) {
      JetStreamSubscription sub = readFromStart(connection, subject);
      while (true) {
        List<Message> batch = sub.fetch(500, Duration.ofMillis(500));
        if (batch.isEmpty()) {
          return events;
        }
        for (Message m : batch) {
          events.add(JobEvent.parseFrom(m.getData()));
          m.ack();
        }
      }
    }
  }

  /** The job's model calls ({@code spb.events.<job>.model}); asserts their sequence has no gap. */
  public List<ai.spboucher.spbgit.proto.ModelCall> modelCalls(String jobId) throws Exception {
    List<JobEvent> events = events(Subjects.modelEvents(jobId));
    assertGapFree(events, "model");
    return events.stream().map(JobEvent::getModelCall).toList();
  }

  /**
   * The job's egress attempts ({@code spb.events.<job>.egress}); asserts their sequence has no gap.
   */
  public List<ai.spboucher.spbgit.proto.EgressAttempt> egressAttempts(String jobId)
      throws Exception {
    List<JobEvent> events = events(Subjects.egressEvents(jobId));
    assertGapFree(events, "egress");
    return events.stream().map(JobEvent::getEgress).toList();
  }

  private static void assertGapFree(List<JobEvent> events, String kind) {
    for (int i = 0; i < events.size(); i++) {
      assertEquals(i + 1, events.get(i).getSequence(), kind + " sequence");
    }
  }

  /**
   * Waits for the runner's FINISHED event of the job, read straight from NATS; fails with the log
   * on timeout.
   */
  public ai.spboucher.spbgit.proto.StatusChange awaitFinishedEvent(String jobId, Duration timeout)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      for (JobEvent event : statusEvents(jobId)) {
        if (event.getStatus().getStatus() == ai.spboucher.spbgit.proto.JobStatus.FINISHED) {
          return event.getStatus();
        }
      }
      Thread.sleep(300);
    }
    return fail("job " + jobId + " did not finish within " + timeout + "\nlog:\n" + log(jobId));
  }

  /**
   * Asserts that {@code secret} is nowhere in a running container: not in its configured
   * environment, not in the environment or command line of any of its processes, not in a file
   * under {@code /work} or {@code /tmp}, and not in its file system (the image and its writable
   * layer, through {@code docker export}). Returns what the process listing showed, for the caller
   * to check it looked at the right thing.
   */
  public static String assertAbsentFromContainer(String containerId, String secret)
      throws Exception {
    try (var docker =
        new ai.spboucher.spbgit.runner.docker.DockerSandbox("unix:///var/run/docker.sock")) {
      String env = String.join("\n", docker.inspect(containerId).getConfig().getEnv());
      org.junit.jupiter.api.Assertions.assertFalse(
          env.contains(secret), "the container's environment");
    }
    String processes =
        dockerOutput(
            "exec",
            "-u",
            SANDBOX_USER,
            containerId,
            "sh",
            "-c",
            "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null; ps -eo args");
    org.junit.jupiter.api.Assertions.assertFalse(
        processes.contains(secret), "process environments and arguments");
    String files =
        dockerOutput(
            "exec",
            "-u",
            SANDBOX_USER,
            containerId,
            "sh",
            "-c",
            "tar -cf - /work /tmp 2>/dev/null");
    org.junit.jupiter.api.Assertions.assertTrue(files.length() > 0, "/work was read");
    org.junit.jupiter.api.Assertions.assertFalse(
        files.contains(secret), "files under /work and /tmp");
    Process export =
        new ProcessBuilder("docker", "export", containerId)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    try (java.io.InputStream tar = export.getInputStream()) {
      // Latin-1 maps bytes to chars one to one; the carried tail finds a secret split between two
      // reads.
      String carry = "";
      byte[] buffer = new byte[1 << 20];
      int n;
      while ((n = tar.read(buffer)) > 0) {
        String window =
            carry + new String(buffer, 0, n, java.nio.charset.StandardCharsets.ISO_8859_1);
        org.junit.jupiter.api.Assertions.assertFalse(
            window.contains(secret), "the container's file system");
        carry = window.substring(Math.max(0, window.length() - secret.length() + 1));
      }
    }
    assertEquals(0, export.waitFor(), "docker export");
    return processes;
  }

  /** Runs the docker CLI; its standard output as Latin-1. */
  public static String dockerOutput(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("docker"));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out =
        new String(
            process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
    process.waitFor();
    return out;
  }

  /** How many job requests wait in the queue stream, not yet taken by a runner. */
  public long queuedRequests() throws Exception {
    try (Connection connection = connect()) {
      return connection
          .jetStreamManagement()
          .getStreamInfo(Subjects.JOBS_STREAM)
          .getStreamState()
          .getMsgCount();
    }
  }

  /** The state of the runners' shared durable consumer on the queue. */
  public ConsumerInfo runnersConsumer() throws Exception {
    try (Connection connection = connect()) {
      return connection
          .jetStreamManagement()
          .getConsumerInfo(Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE));
    }
  }

  /** Containers, in any state, labelled as belonging to the job. */
  public List<Container> jobContainers(String jobId) {
    try (var docker =
        new ai.spboucher.spbgit.runner.docker.DockerSandbox("unix:///var/run/docker.sock")) {
      return docker
          .client()
          .listContainersCmd()
          .withShowAll(true)
          .withLabelFilter(Map.of(SandboxSpec.JOB_LABEL, jobId))
          .exec();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Force-removes the job's containers, for clean-up after a test that may leave one behind. */
  public void removeContainers(String jobId) {
    try (var docker =
        new ai.spboucher.spbgit.runner.docker.DockerSandbox("unix:///var/run/docker.sock")) {
      jobContainers(jobId).forEach(c -> docker.remove(c.getId()));
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Polls {@code condition} every 200 ms; fails with {@code what} if it does not hold within {@code
   * timeout}.
   */
  public static void awaitCondition(String what, Duration timeout, Check condition)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.holds()) {
      if (System.nanoTime() > deadline) {
        fail("not within " + timeout + ": " + what);
      }
      Thread.sleep(200);
    }
  }

  /** A condition that may throw, for {@link #awaitCondition}. */
  @FunctionalInterface
  public interface Check {
    boolean holds() throws Exception;
  }

  @Override
  public void close() throws Exception {
    stack.close();
  }
}
