package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.gateway.PktLines;
import io.vertx.core.json.JsonObject;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A stream of bad requests against a running gateway, sent by a few client threads until it is
 * closed: malformed, oversized and deeply nested bodies; missing, unknown, malformed, expired and
 * misused tokens; unknown repositories and jobs; invalid path and query parameters and branch
 * names; garbage for the smart-HTTP endpoints; a job token pushing a ref it may not write;
 * websocket upgrades that must be refused. Each probe states the status it must get. Every answer
 * must come within {@link #TIMEOUT}, and every 4xx must carry a JSON {@code {"error": ...}} body,
 * as the API and the git endpoints promise. The one answer that is not a 4xx is the refused push:
 * git's protocol reports a refused ref in a 200 response ({@code ng <ref> <reason>}), which is what
 * git clients read.
 *
 * <p>Threading: probes are sent from the stream's own threads; counts and violations may be read
 * from any thread.
 */
final class BadRequestStream implements AutoCloseable {

  static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final String JSON = "application/json";
  private static final String RECEIVE_TYPE = "application/x-git-receive-pack-request";
  private static final String UPLOAD_TYPE = "application/x-git-upload-pack-request";
  private static final String ZERO_ID = "0".repeat(40);
  private static final int KEPT_VIOLATIONS = 20;

  /**
   * What the stream aims at: a repository with one real job, the commit its main branch points at,
   * a job token for that repository (of a job that does not exist), one for another repository, and
   * one that has expired.
   */
  record Target(
      String baseUrl,
      String ownerToken,
      String repo,
      String jobId,
      String mainSha,
      String jobToken,
      String otherRepoJobToken,
      String expiredJobToken) {}

  /** An answer as the client saw it. */
  record Answer(int status, String contentType, String body) {}

  /** One kind of bad request and the status it must get. */
  private record Probe(String name, int expected, Sender sender) {}

  @FunctionalInterface
  private interface Sender {
    Answer send() throws Exception;
  }

  private final Target target;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();
  private final List<Probe> probes;
  private final ExecutorService clients;
  private final AtomicBoolean stopping = new AtomicBoolean();
  private final Map<Integer, LongAdder> byStatus = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> byProbe = new ConcurrentHashMap<>();
  private final AtomicLong violationCount = new AtomicLong();
  private final List<String> violations = Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong pushesAnswered = new AtomicLong();

  private BadRequestStream(Target target, int threads) throws Exception {
    this.target = target;
    this.probes = probes();
    this.clients =
        Executors.newFixedThreadPool(
            threads,
            r -> {
              Thread t = new Thread(r, "bad-requests");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts {@code threads} clients, each going round the probes from its own starting point, {@code
   * pause} apart.
   */
  static BadRequestStream start(Target target, int threads, Duration pause) throws Exception {
    BadRequestStream stream = new BadRequestStream(target, threads);
    for (int t = 0; t < threads; t++) {
      int offset = t * stream.probes.size() / threads;
      stream.clients.execute(() -> stream.run(offset, pause));
    }
    return stream;
  }

  private void run(int offset, Duration pause) {
    for (int i = offset; !stopping.get(); i++) {
      send(probes.get(i % probes.size()));
      try {
        Thread.sleep(pause.toMillis());
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void send(Probe probe) {
    Answer answer;
    try {
      answer = probe.sender().send();
    } catch (java.net.http.HttpTimeoutException | java.net.SocketTimeoutException e) {
      violation(probe, "no answer within " + TIMEOUT.toSeconds() + " s");
      count(probe, -1);
      return;
    } catch (Exception e) {
      violation(probe, "the exchange failed: " + e);
      count(probe, -2);
      return;
    }
    count(probe, answer.status());
    if (answer.status() != probe.expected()) {
      violation(probe, "answered " + answer.status() + " " + abbreviated(answer.body()));
    } else if (answer.status() >= 400 && !isJsonError(answer)) {
      violation(
          probe,
          "answered "
              + answer.status()
              + " without a JSON error: "
              + answer.contentType()
              + " "
              + abbreviated(answer.body()));
    }
  }

  private void count(Probe probe, int status) {
    byStatus.computeIfAbsent(status, s -> new LongAdder()).increment();
    byProbe.computeIfAbsent(probe.name(), s -> new LongAdder()).increment();
  }

  private void violation(Probe probe, String what) {
    if (violationCount.incrementAndGet() <= KEPT_VIOLATIONS) {
      violations.add(probe.name() + " (expected " + probe.expected() + "): " + what);
    }
  }

  private static boolean isJsonError(Answer answer) {
    if (answer.contentType() == null || !answer.contentType().startsWith(JSON)) {
      return false;
    }
    try {
      return new JsonObject(answer.body()).getValue("error") instanceof String;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static String abbreviated(String body) {
    return body.length() > 200 ? body.substring(0, 200) + "..." : body;
  }

  /** Answers by status, in status order; -1 counts timeouts, -2 failed exchanges. */
  Map<Integer, Long> countsByStatus() {
    Map<Integer, Long> counts = new TreeMap<>();
    byStatus.forEach((status, n) -> counts.put(status, n.sum()));
    return counts;
  }

  /** How many times each probe was sent. */
  Map<String, Long> countsByProbe() {
    Map<String, Long> counts = new TreeMap<>();
    byProbe.forEach((name, n) -> counts.put(name, n.sum()));
    return counts;
  }

  long sent() {
    return countsByStatus().values().stream().mapToLong(Long::longValue).sum();
  }

  int probeCount() {
    return probes.size();
  }

  long violationCount() {
    return violationCount.get();
  }

  /** The first violations, described. */
  List<String> violations() {
    return List.copyOf(violations);
  }

  /**
   * How many refused pushes were answered as git answers them (each one must have changed nothing).
   */
  long refusedPushes() {
    return pushesAnswered.get();
  }

  /** Stops the clients and waits for the requests in flight. */
  @Override
  public void close() throws InterruptedException {
    stopping.set(true);
    clients.shutdown();
    if (!clients.awaitTermination(TIMEOUT.toSeconds() + 10, TimeUnit.SECONDS)) {
      clients.shutdownNow();
    }
  }

  // ---- the probes ----

  private List<Probe> probes() throws Exception {
    List<Probe> all = new ArrayList<>();
    String jobs = "/api/v1/repos/" + target.repo() + "/agent-jobs";
    String job = jobs + "/" + target.jobId();
    String owner = "Bearer " + target.ownerToken();
    String validJob = "{\"task\":\"abuse\",\"exec\":\"true\"}";

    all.add(api("job: malformed JSON", 400, "POST", jobs, owner, "{\"task\": \"x\", \"exec\": "));
    all.add(api("job: a JSON array", 400, "POST", jobs, owner, "[\"task\", \"exec\"]"));
    all.add(api("job: no task", 400, "POST", jobs, owner, "{\"exec\":\"true\"}"));
    all.add(
        api(
            "job: task of the wrong type",
            400,
            "POST",
            jobs,
            owner,
            "{\"task\":7,\"exec\":\"true\"}"));
    all.add(api("job: 20,000 nested arrays", 400, "POST", jobs, owner, "[".repeat(20_000)));
    all.add(
        new Probe(
            "job: invalid UTF-8",
            400,
            () ->
                send(
                    request("POST", jobs, owner)
                        .header("Content-Type", JSON)
                        .POST(
                            HttpRequest.BodyPublishers.ofByteArray(
                                new byte[] {
                                  '{',
                                  '"',
                                  't',
                                  'a',
                                  's',
                                  'k',
                                  '"',
                                  ':',
                                  '"',
                                  (byte) 0xc3,
                                  (byte) 0x28,
                                  '"',
                                  '}'
                                })))));
    all.add(
        api(
            "job: body over 64 KiB",
            413,
            "POST",
            jobs,
            owner,
            "{\"task\":\"" + "x".repeat(100_000) + "\",\"exec\":\"true\"}"));
    all.add(api("job: no credentials", 401, "POST", jobs, null, validJob));
    all.add(api("job: unknown token", 401, "POST", jobs, "Bearer spb_not_a_token", validJob));
    all.add(api("job: Authorization without a credential", 401, "POST", jobs, "Bearer", validJob));
    all.add(
        api("job: unsupported scheme", 401, "POST", jobs, "Digest username=\"owner\"", validJob));
    all.add(api("job: malformed Basic", 401, "POST", jobs, "Basic !!!", validJob));
    all.add(
        api(
            "job: job token on the API",
            403,
            "POST",
            jobs,
            "Bearer " + target.jobToken(),
            validJob));
    all.add(
        api("jobs: job token on the API", 403, "GET", jobs, "Bearer " + target.jobToken(), null));
    all.add(
        api(
            "jobs: expired job token",
            401,
            "GET",
            jobs,
            "Bearer " + target.expiredJobToken(),
            null));
    all.add(
        api(
            "job: unknown repository",
            404,
            "POST",
            "/api/v1/repos/no-such-repo/agent-jobs",
            owner,
            validJob));
    all.add(
        api(
            "jobs: unknown repository",
            404,
            "GET",
            "/api/v1/repos/no-such-repo/agent-jobs",
            owner,
            null));
    all.add(
        api(
            "jobs: invalid repository name",
            400,
            "GET",
            "/api/v1/repos/-bad-/agent-jobs",
            owner,
            null));
    all.add(api("job: unknown id", 404, "GET", jobs + "/zz-no-such-job", owner, null));
    all.add(api("job: malformed id", 400, "GET", jobs + "/Not_A_Job", owner, null));
    all.add(
        api(
            "job: in another repository",
            404,
            "GET",
            "/api/v1/repos/no-such-repo/agent-jobs/" + target.jobId(),
            owner,
            null));
    all.add(api("cancel: unknown job", 404, "POST", jobs + "/zz-no-such-job/cancel", owner, null));
    all.add(api("log: unknown job", 404, "GET", jobs + "/zz-no-such-job/log", owner, null));
    all.add(api("diff: unknown job", 404, "GET", jobs + "/zz-no-such-job/diff", owner, null));
    all.add(api("refs: unknown job", 404, "DELETE", jobs + "/zz-no-such-job/refs", owner, null));
    all.add(api("log socket: a plain GET", 400, "GET", job + "/logs", owner, null));
    for (String branch :
        List.of("bad..branch", "x.lock", "a b", "~x", "", "/main", "refs/heads/x@{1}")) {
      all.add(
          api(
              "approve: branch '" + branch + "'",
              400,
              "POST",
              job + "/approve",
              owner,
              new JsonObject().put("branch", branch).put("sha", ZERO_ID).encode()));
    }
    all.add(api("approve: no sha", 400, "POST", job + "/approve", owner, "{\"branch\":\"main\"}"));
    all.add(
        api(
            "approve: short sha",
            400,
            "POST",
            job + "/approve",
            owner,
            "{\"branch\":\"main\",\"sha\":\"abc\"}"));
    all.add(
        api(
            "approve: unknown job",
            404,
            "POST",
            jobs + "/zz-no-such-job/approve",
            owner,
            "{\"branch\":\"main\",\"sha\":\"" + ZERO_ID + "\"}"));
    // Before the job ends it is still running; after, its proposal is not this commit: a conflict
    // either way.
    all.add(
        api(
            "approve: a commit that is not the proposal",
            409,
            "POST",
            job + "/approve",
            owner,
            "{\"branch\":\"abuse-approved\",\"sha\":\"" + ZERO_ID + "\"}"));
    all.add(
        api(
            "audit: malformed job filter",
            400,
            "GET",
            "/api/v1/agent-jobs?job=Not%20A%20Job",
            owner,
            null));
    all.add(
        api("audit: malformed repo filter", 400, "GET", "/api/v1/agent-jobs?repo=-x", owner, null));
    all.add(api("unknown API endpoint", 404, "GET", "/api/v1/no-such-endpoint", owner, null));
    all.add(
        api("repo: invalid name", 400, "POST", "/api/v1/repos", owner, "{\"name\":\"../escape\"}"));
    all.add(
        api(
            "job token: lifetime out of range",
            400,
            "POST",
            "/api/v1/job-tokens",
            owner,
            "{\"repo\":\"" + target.repo() + "\",\"job\":\"x\",\"ttl\":99999}"));

    String git = "/" + target.repo() + ".git";
    all.add(
        api(
            "info/refs: unknown service",
            400,
            "GET",
            git + "/info/refs?service=git-evil",
            null,
            null));
    all.add(api("info/refs: no service", 400, "GET", git + "/info/refs", null, null));
    all.add(
        api(
            "info/refs: unknown repository",
            404,
            "GET",
            "/no-such-repo.git/info/refs?service=git-upload-pack",
            null,
            null));
    all.add(
        git(
            "upload-pack: junk pkt-lines",
            400,
            git + "/git-upload-pack",
            UPLOAD_TYPE,
            null,
            "zzzzgarbage".getBytes(StandardCharsets.US_ASCII)));
    all.add(
        git(
            "receive-pack: junk pkt-lines",
            400,
            git + "/git-receive-pack",
            RECEIVE_TYPE,
            target.ownerToken(),
            "zzzzgarbage".getBytes(StandardCharsets.US_ASCII)));
    byte[] create = PktLines.createRef("refs/heads/abuse-owner", target.mainSha(), "report-status");
    all.add(
        git(
            "receive-pack: truncated commands",
            400,
            git + "/git-receive-pack",
            RECEIVE_TYPE,
            target.ownerToken(),
            java.util.Arrays.copyOf(create, create.length - 10)));
    byte[] forbidden =
        PktLines.createRef("refs/heads/abuse-job", target.mainSha(), "report-status");
    all.add(
        git(
            "receive-pack: no credentials",
            401,
            git + "/git-receive-pack",
            RECEIVE_TYPE,
            null,
            forbidden));
    all.add(
        git(
            "receive-pack: expired job token",
            401,
            git + "/git-receive-pack",
            RECEIVE_TYPE,
            target.expiredJobToken(),
            forbidden));
    all.add(
        git(
            "receive-pack: job token of another repository",
            403,
            git + "/git-receive-pack",
            RECEIVE_TYPE,
            target.otherRepoJobToken(),
            forbidden));
    all.add(
        git(
            "receive-pack: wrong content type",
            415,
            git + "/git-receive-pack",
            "text/plain",
            target.jobToken(),
            forbidden));
    all.add(
        new Probe(
            "receive-pack: job token, ref outside its scope",
            200,
            () -> refusedPush(git, forbidden)));

    all.add(
        upgrade("log socket: unknown job", 404, jobs + "/zz-no-such-job/logs", owner, null, "13"));
    all.add(
        upgrade(
            "log socket: unknown repository",
            404,
            "/api/v1/repos/no-such-repo/agent-jobs/" + target.jobId() + "/logs",
            owner,
            null,
            "13"));
    all.add(upgrade("log socket: after=-1", 400, job + "/logs?after=-1", owner, null, "13"));
    all.add(upgrade("log socket: after=soon", 400, job + "/logs?after=soon", owner, null, "13"));
    all.add(upgrade("log socket: no credentials", 401, job + "/logs", null, null, "13"));
    all.add(
        upgrade(
            "log socket: job token",
            403,
            job + "/logs",
            "Bearer " + target.jobToken(),
            null,
            "13"));
    all.add(
        upgrade(
            "log socket: another site's Origin",
            403,
            job + "/logs",
            owner,
            "http://evil.example",
            "13"));
    all.add(upgrade("log socket: websocket version 8", 426, job + "/logs", owner, null, "8"));
    return List.copyOf(all);
  }

  private HttpRequest.Builder request(String method, String path, String authorization) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(target.baseUrl() + path)).timeout(TIMEOUT);
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return b;
  }

  private Probe api(
      String name, int expected, String method, String path, String authorization, String body) {
    return new Probe(
        name,
        expected,
        () -> {
          HttpRequest.Builder b =
              request(method, path, authorization)
                  .method(
                      method,
                      body == null
                          ? HttpRequest.BodyPublishers.noBody()
                          : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
          if (body != null) {
            b.header("Content-Type", JSON);
          }
          return send(b);
        });
  }

  private Probe git(
      String name, int expected, String path, String contentType, String token, byte[] body) {
    return new Probe(
        name,
        expected,
        () ->
            send(
                request("POST", path, basic(token))
                    .header("Content-Type", contentType)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body))));
  }

  /** A push git's protocol refuses ref by ref: 200 with {@code ng <ref> <reason>}. */
  private Answer refusedPush(String git, byte[] body) throws Exception {
    Answer answer =
        send(
            request("POST", git + "/git-receive-pack", basic(target.jobToken()))
                .header("Content-Type", RECEIVE_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)));
    if (answer.status() == 200) {
      if (!answer.body().contains("ng refs/heads/abuse-job outside the job's scope")) {
        return new Answer(
            -3, answer.contentType(), "200 without the ref's refusal: " + answer.body());
      }
      pushesAnswered.incrementAndGet();
    }
    return answer;
  }

  private static String basic(String token) {
    return token == null
        ? null
        : "Basic "
            + Base64.getEncoder()
                .encodeToString(("agent:" + token).getBytes(StandardCharsets.UTF_8));
  }

  private Answer send(HttpRequest.Builder request) throws Exception {
    HttpResponse<String> r = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    return new Answer(
        r.statusCode(), r.headers().firstValue("Content-Type").orElse(null), r.body());
  }

  /**
   * A websocket opening handshake over a raw socket (an HTTP client will not send handshake headers
   * of its own choosing, nor a wrong version); an upgrade that succeeds is closed at once and
   * counts as its 101.
   */
  private Probe upgrade(
      String name, int expected, String path, String authorization, String origin, String version) {
    return new Probe(
        name,
        expected,
        () -> {
          URI base = URI.create(target.baseUrl());
          try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(base.getHost(), base.getPort()), 10_000);
            socket.setSoTimeout((int) TIMEOUT.toMillis());
            StringBuilder head =
                new StringBuilder(
                    "GET "
                        + path
                        + " HTTP/1.1\r\nHost: "
                        + base.getAuthority()
                        + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        + "Sec-WebSocket-Version: "
                        + version
                        + "\r\n");
            if (authorization != null) {
              head.append("Authorization: ").append(authorization).append("\r\n");
            }
            if (origin != null) {
              head.append("Origin: ").append(origin).append("\r\n");
            }
            OutputStream out = socket.getOutputStream();
            out.write(head.append("\r\n").toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return readAnswer(new BufferedInputStream(socket.getInputStream()));
          }
        });
  }

  /** An HTTP/1.1 answer's status, type and body (by its Content-Length; none for a 101). */
  private static Answer readAnswer(InputStream in) throws IOException {
    String statusLine = line(in);
    String[] parts = statusLine.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP answer: " + statusLine);
    }
    int status = Integer.parseInt(parts[1]);
    String type = null;
    int length = 0;
    for (String header = line(in); !header.isEmpty(); header = line(in)) {
      int colon = header.indexOf(':');
      String name = colon < 0 ? header : header.substring(0, colon).strip();
      String value = colon < 0 ? "" : header.substring(colon + 1).strip();
      if (name.equalsIgnoreCase("Content-Type")) {
        type = value;
      } else if (name.equalsIgnoreCase("Content-Length")) {
        length = Integer.parseInt(value);
      }
    }
    if (status == 101) {
      return new Answer(status, type, "");
    }
    return new Answer(status, type, new String(in.readNBytes(length), StandardCharsets.UTF_8));
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        throw new IOException("the connection closed mid-answer");
      }
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.UTF_8);
  }
}
