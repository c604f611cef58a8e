package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.testsupport.RestClient;
import ai.spboucher.spbgit.testsupport.Stack;
import ai.spboucher.spbgit.testsupport.StackGateway;
import ai.spboucher.spbgit.testsupport.StackLaunchers;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;

/**
 * A real gateway for end-to-end tests: deployed in this JVM on a free port with its own data
 * directory, and a blocking HTTP client for driving the API from the test thread. Unless told where
 * runner keys are ({@code runnerKeys}), its jobs' tokens are sealed to a stand-in runner key of its
 * data directory, which {@link RunnerStandIn#jobToken} opens.
 */
public final class TestGateway implements StackGateway {

  public final Vertx vertx;
  public final Path dataDir;
  public final GatewayVerticle verticle;
  public final String baseUrl;
  public final String ownerToken;
  private final RestClient rest;

  private TestGateway(Vertx vertx, Path dataDir, GatewayVerticle verticle) throws IOException {
    this.vertx = vertx;
    this.dataDir = dataDir;
    this.verticle = verticle;
    this.baseUrl = "http://127.0.0.1:" + verticle.actualPort();
    this.ownerToken = Files.readString(dataDir.resolve(DataDir.INITIAL_OWNER_TOKEN)).strip();
    this.rest = new RestClient(baseUrl, null);
  }

  /** How a {@link Stack} starts a gateway: {@link #start(Path, JsonObject, Clock)}. */
  public static final class Launcher implements StackLaunchers.Gateway {
    @Override
    public StackGateway start(Path dataDir, JsonObject config, Clock clock) throws Exception {
      return TestGateway.start(dataDir, config, clock);
    }
  }

  @Override
  public String baseUrl() {
    return baseUrl;
  }

  @Override
  public Path dataDir() {
    return dataDir;
  }

  @Override
  public String ownerToken() {
    return ownerToken;
  }

  /** The gateway's API, as {@code token} (null: anonymous). */
  public RestClient rest(String token) {
    return rest.as(token);
  }

  public static TestGateway start(Path dataDir) throws Exception {
    return start(dataDir, new JsonObject());
  }

  public static TestGateway start(Path dataDir, JsonObject overrides) throws Exception {
    return start(dataDir, overrides, Clock.systemUTC());
  }

  /**
   * A gateway that reads the time from {@code clock} (jobs' deadlines, token lifetimes, the
   * overdue-job check).
   */
  public static TestGateway start(Path dataDir, JsonObject overrides, Clock clock)
      throws Exception {
    if (!overrides.containsKey("runnerKeys")) {
      RunnerStandIn.registerKey(dataDir);
    }
    JsonObject json =
        new JsonObject().put("dataDir", dataDir.toString()).put("httpPort", "0").mergeIn(overrides);
    Vertx vertx = Vertx.vertx();
    GatewayVerticle verticle = new GatewayVerticle(GatewayConfig.from(json), clock);
    vertx.deployVerticle(verticle).await();
    return new TestGateway(vertx, dataDir, verticle);
  }

  public String repoUrl(String repo) {
    return baseUrl + "/" + repo + ".git";
  }

  /**
   * The repository URL with a credential embedded as the Basic password, as git clients send it.
   */
  public String pushUrl(String repo, String token) {
    return "http://agent:" + token + "@127.0.0.1:" + verticle.actualPort() + "/" + repo + ".git";
  }

  public Path repoDir(String repo) {
    return dataDir.resolve("repos").resolve(repo + ".git");
  }

  public HttpResponse<String> api(String method, String path, String token, String body)
      throws Exception {
    return rest.as(token).send(method, path, body);
  }

  /**
   * Every series {@code GET /metrics} reports now, by its name with labels as printed ({@code
   * spb_jobs_finished_total{exit_reason="ok"}}), with its value.
   */
  /** Asks the owner's API for a job on {@code repo}; the answer as it is. */
  public HttpResponse<String> postJob(String repo, JsonObject body) throws Exception {
    return api("POST", "/api/v1/repos/" + repo + "/agent-jobs", ownerToken, body.encode());
  }

  /** Creates a job on {@code repo} as the owner; fails unless it is created, else the job. */
  public JsonObject createJob(String repo, JsonObject body) throws Exception {
    HttpResponse<String> created = postJob(repo, body);
    assertEquals(201, created.statusCode(), created.body());
    return new JsonObject(created.body());
  }

  /** GETs {@code path} as the owner; fails unless it answers 200, else the object it answered. */
  public JsonObject getJson(String path) throws Exception {
    HttpResponse<String> response = api("GET", path, ownerToken, null);
    assertEquals(200, response.statusCode(), response.body());
    return new JsonObject(response.body());
  }

  /** The owner's list of {@code repo}'s jobs; fails unless it answers 200. */
  public io.vertx.core.json.JsonArray jobsOf(String repo) throws Exception {
    HttpResponse<String> response = api("GET", "/api/v1/agent-jobs?repo=" + repo, ownerToken, null);
    assertEquals(200, response.statusCode(), response.body());
    return new io.vertx.core.json.JsonArray(response.body());
  }

  public java.util.Map<String, Double> metrics() throws Exception {
    HttpResponse<String> response = api("GET", "/metrics", null, null);
    if (response.statusCode() != 200) {
      throw new IOException(
          "GET /metrics answered " + response.statusCode() + ": " + response.body());
    }
    java.util.Map<String, Double> values = new java.util.HashMap<>();
    response
        .body()
        .lines()
        .filter(l -> !l.isBlank() && !l.startsWith("#"))
        .forEach(
            line -> {
              // The value follows the labels (which may hold spaces), or the bare name.
              int end = line.indexOf('}') >= 0 ? line.lastIndexOf('}') + 1 : line.indexOf(' ');
              values.put(line.substring(0, end), Double.valueOf(line.substring(end).strip()));
            });
    return values;
  }

  public HttpResponse<byte[]> raw(HttpRequest request) throws Exception {
    return rest.raw(request);
  }

  /** Waits up to 30 s for {@code /readyz} to answer 200: the gateway has connected to NATS. */
  public void awaitReady() throws Exception {
    rest.awaitReady(Duration.ofSeconds(30));
  }

  /** Waits up to 30 s for the job at {@code jobPath} to show finished; its JSON then. */
  public JsonObject awaitFinished(String jobPath) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonObject job = new JsonObject(api("GET", jobPath, ownerToken, null).body());
    while (!"finished".equals(job.getString("status")) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      job = new JsonObject(api("GET", jobPath, ownerToken, null).body());
    }
    assertEquals("finished", job.getString("status"), job.encodePrettily());
    return job;
  }

  /** The first audit entry of {@code job} with {@code event}, as the owner's API lists it. */
  public JsonObject auditEntry(String job, String event) throws Exception {
    HttpResponse<String> response = api("GET", "/api/v1/agent-jobs?job=" + job, ownerToken, null);
    return new JsonArray(response.body())
        .stream()
            .map(JsonObject.class::cast)
            .filter(e -> event.equals(e.getString("event")))
            .findFirst()
            .orElseThrow(
                () -> new AssertionError("no " + event + " for " + job + ": " + response.body()));
  }

  public void createRepo(String name) throws Exception {
    HttpResponse<String> r =
        api("POST", "/api/v1/repos", ownerToken, new JsonObject().put("name", name).encode());
    if (r.statusCode() != 201) {
      throw new AssertionError("cannot create " + name + ": " + r.statusCode() + " " + r.body());
    }
  }

  public String jobToken(String repo, String job, long ttlSeconds) throws Exception {
    HttpResponse<String> r =
        api(
            "POST",
            "/api/v1/job-tokens",
            ownerToken,
            new JsonObject().put("repo", repo).put("job", job).put("ttl", ttlSeconds).encode());
    if (r.statusCode() != 201) {
      throw new AssertionError("cannot mint a job token: " + r.statusCode() + " " + r.body());
    }
    return new JsonObject(r.body()).getString("token");
  }

  @Override
  public void close() {
    vertx.close().await();
  }
}
