package ai.spboucher.spbgit.runner.env;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * A minimal npm registry serving {@link NpmPackage}s over plain HTTP on one address of this
 * machine: what a job's {@code setup} installs from with {@code npm install --registry <url()>}.
 * Every request is recorded with its client address.
 *
 * <ul>
 *   <li>{@code GET /<name>} (scoped: {@code /@scope%2fname} or {@code /@scope/name}): the
 *       packument, whose {@code dist.tarball} points back at this registry under the Host the
 *       client used, so it also holds when the client reached it through a proxy or under another
 *       name;
 *   <li>{@code GET /<name>/-/<unscoped-name>-<version>.tgz}: the tarball.
 * </ul>
 *
 * <p>Threading: requests are served on the server's own daemon threads; {@link #publish} and {@link
 * #requests} may be called from any thread.
 */
public final class NpmRegistry implements AutoCloseable {

  private final Map<String, Map<String, NpmPackage>> packages = new ConcurrentHashMap<>();
  private final RecordingHttpServer server;

  private NpmRegistry(InetAddress address) throws IOException {
    server =
        new RecordingHttpServer(
            address, "npm-registry", (method, path, host) -> answer(path, host));
  }

  /** Serves the packages on {@code address} and an ephemeral port. */
  public static NpmRegistry serve(InetAddress address, NpmPackage... packages) throws IOException {
    NpmRegistry registry = new NpmRegistry(address);
    for (NpmPackage p : packages) {
      registry.publish(p);
    }
    return registry;
  }

  /** Publishes one more package version. */
  public NpmRegistry publish(NpmPackage p) {
    packages.computeIfAbsent(p.name(), n -> new ConcurrentHashMap<>()).put(p.version(), p);
    return this;
  }

  /** {@code http://<address>:<port>/}: npm's {@code --registry}. */
  public String url() {
    return "http://" + server.hostPort() + "/";
  }

  public InetAddress address() {
    return server.address();
  }

  public int port() {
    return server.port();
  }

  /** Every request answered so far, oldest first. */
  public List<ServedRequest> requests() {
    return server.requests();
  }

  /** The requests so far that downloaded this package version's tarball. */
  public List<ServedRequest> downloadsOf(NpmPackage p) {
    return server.requests(r -> r.path().equals(tarballPath(p)) && r.status() == 200);
  }

  /** The requests so far that match. */
  public List<ServedRequest> requests(Predicate<ServedRequest> which) {
    return server.requests(which);
  }

  private static String tarballPath(NpmPackage p) {
    return "/" + p.name() + "/-/" + p.tarballFileName();
  }

  private RecordingHttpServer.Reply answer(String rawPath, String host) {
    // npm escapes a scoped name's slash in packument requests (/@scope%2fname) but not in tarball
    // URLs.
    String path = rawPath.replace("%2f", "/").replace("%2F", "/");
    int dash = path.indexOf("/-/");
    if (dash > 0) {
      Map<String, NpmPackage> versions = packages.get(path.substring(1, dash));
      String file = path.substring(dash + 3);
      return versions == null
          ? RecordingHttpServer.Reply.notFound()
          : versions.values().stream()
              .filter(p -> p.tarballFileName().equals(file))
              .findFirst()
              .map(p -> new RecordingHttpServer.Reply(200, "application/octet-stream", p.tarball()))
              .orElse(RecordingHttpServer.Reply.notFound());
    }
    Map<String, NpmPackage> versions = packages.get(path.substring(1));
    if (versions == null) {
      return new RecordingHttpServer.Reply(
          404, "application/json", "{\"error\":\"not found\"}".getBytes(StandardCharsets.UTF_8));
    }
    return new RecordingHttpServer.Reply(
        200,
        "application/json",
        packument(path.substring(1), versions, host).encode().getBytes(StandardCharsets.UTF_8));
  }

  private static JsonObject packument(String name, Map<String, NpmPackage> versions, String host) {
    JsonObject docs = new JsonObject();
    String latest = null;
    for (NpmPackage p : new TreeMap<>(versions).values()) {
      docs.put(
          p.version(),
          p.packageJson()
              .put("_id", p.name() + "@" + p.version())
              .put(
                  "dist",
                  new JsonObject()
                      .put("tarball", "http://" + host + tarballPath(p))
                      .put("shasum", p.shasum())
                      .put("integrity", p.integrity())));
      // Plain x.y.z versions: the highest by semver order is latest.
      if (latest == null || compareSemver(p.version(), latest) > 0) {
        latest = p.version();
      }
    }
    return new JsonObject()
        .put("_id", name)
        .put("name", name)
        .put("dist-tags", new JsonObject().put("latest", latest))
        .put("versions", docs);
  }

  private static int compareSemver(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    for (int i = 0; i < 3; i++) {
      int c = Integer.compare(Integer.parseInt(x[i]), Integer.parseInt(y[i]));
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  @Override
  public void close() {
    server.close();
  }
}
