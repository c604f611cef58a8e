package ai.spboucher.spbgit.benchmarks;

import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The packaged gateway ({@code spb-gateway.jar}) as an operator runs it, on a port the OS picks,
 * with its own data directory and, when {@code nats-server} is installed, its own NATS with
 * JetStream on a free port. The gateway serves git and the repository API without NATS; it is
 * started with one only so that it runs as deployed, not retrying a connection in the background.
 */
final class GatewayProcess implements AutoCloseable {

  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");

  private final List<Process> processes = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private final StringBuffer log = new StringBuffer();

  private Process gateway;
  private String baseUrl;
  private String ownerToken;
  private boolean withNats;

  private GatewayProcess() {}

  /**
   * Starts the gateway in {@code work} and waits until it listens; stops what it started if that
   * fails.
   */
  static GatewayProcess start(Path jar, Path work) throws IOException, InterruptedException {
    if (!Files.isRegularFile(jar)) {
      throw new IOException(
          jar
              + " not found: build it with mvn -B -o -q -pl gateway-verticle -am package "
              + "-DskipTests");
    }
    GatewayProcess gateway = new GatewayProcess();
    try {
      gateway.launch(jar, work);
      return gateway;
    } catch (IOException | InterruptedException | RuntimeException e) {
      gateway.close();
      throw e;
    }
  }

  private void launch(Path jar, Path work) throws IOException, InterruptedException {
    Path data = Files.createDirectories(work.resolve("data"));
    String natsUrl = "nats://127.0.0.1:" + freePort();
    withNats = startNats(natsUrl, Files.createDirectories(work.resolve("nats")));
    ProcessBuilder pb =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                jar.toString())
            .redirectErrorStream(true);
    pb.environment()
        .putAll(
            Map.of("SPB_DATA_DIR", data.toString(), "SPB_HTTP_PORT", "0", "SPB_NATS_URL", natsUrl));
    gateway = pb.start();
    processes.add(0, gateway);
    baseUrl = "http://127.0.0.1:" + awaitPort(gateway);
    ownerToken =
        Files.readString(data.resolve("initial-owner-token"), StandardCharsets.UTF_8).strip();
  }

  /** CPU time the gateway process has used so far, all its threads together. */
  double cpuMillis() {
    return gateway.info().totalCpuDuration().orElseThrow().toNanos() / 1e6;
  }

  boolean withNats() {
    return withNats;
  }

  /** The clone URL of {@code repo}, with {@code token} as the Basic password when not null. */
  String gitUrl(String repo, String token) {
    return (token == null ? baseUrl : baseUrl.replace("http://", "http://bench:" + token + "@"))
        + "/"
        + repo
        + ".git";
  }

  String ownerToken() {
    return ownerToken;
  }

  void createRepo(String name) throws IOException, InterruptedException {
    api("/api/v1/repos", new JsonObject().put("name", name));
  }

  /** A job token minted through the REST API, as the gateway mints one for each job. */
  String jobToken(String repo, String job, long ttlSeconds)
      throws IOException, InterruptedException {
    return api(
            "/api/v1/job-tokens",
            new JsonObject().put("repo", repo).put("job", job).put("ttl", ttlSeconds))
        .getString("token");
  }

  private JsonObject api(String path, JsonObject body) throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + ownerToken)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode()))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 201) {
      throw new IOException("POST " + path + " answered " + r.statusCode() + ": " + r.body());
    }
    return new JsonObject(r.body());
  }

  private boolean startNats(String url, Path store) throws IOException {
    if (!onPath("nats-server")) {
      return false;
    }
    String port = url.substring(url.lastIndexOf(':') + 1);
    Process nats =
        new ProcessBuilder(
                "nats-server", "-a", "127.0.0.1", "-p", port, "-js", "-sd", store.toString())
            .redirectErrorStream(true)
            .redirectOutput(store.resolve("nats.log").toFile())
            .start();
    processes.add(nats);
    return true;
  }

  private int awaitPort(Process gateway) throws IOException, InterruptedException {
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(gateway.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  log.append(line).append('\n');
                  Matcher m = LISTENING.matcher(line);
                  if (m.find()) {
                    port.complete(Integer.parseInt(m.group(1)));
                  }
                }
                port.completeExceptionally(new IOException("the gateway exited:\n" + log));
              } catch (IOException e) {
                port.completeExceptionally(e);
              }
            },
            "gateway-log");
    reader.setDaemon(true);
    reader.start();
    try {
      return port.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IOException("the gateway did not start: " + e.getMessage() + "\n" + log, e);
    }
  }

  private static boolean onPath(String program) {
    String path = System.getenv().getOrDefault("PATH", "");
    for (String dir : path.split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /**
   * Stops the gateway, then NATS, so the gateway's own shutdown can close its NATS connection
   * cleanly.
   */
  @Override
  public void close() {
    for (Process p : processes) {
      p.destroy();
      try {
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
