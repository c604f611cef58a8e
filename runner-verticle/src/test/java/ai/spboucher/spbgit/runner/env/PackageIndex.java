package ai.spboucher.spbgit.runner.env;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * A PEP 503 "simple" package index serving {@link Wheel}s over plain HTTP on one address of this
 * machine: what a job's {@code setup} installs from with {@code pip install --index-url
 * <simpleUrl()>}, and what the agent phase must not reach. Every request is recorded with its
 * client address, so a test can tell who fetched what.
 *
 * <ul>
 *   <li>{@code GET /simple/}: one link per project;
 *   <li>{@code GET /simple/<normalized-name>/}: one {@code <a
 *       href="../../packages/<file>#sha256=<hex>">} per wheel (a name that is not normalized, or
 *       lacks the slash, is redirected as PEP 503 allows);
 *   <li>{@code GET /packages/<file>}: the wheel.
 * </ul>
 *
 * <p>Threading: requests are served on the server's own daemon threads; {@link #add} and {@link
 * #requests} may be called from any thread.
 */
public final class PackageIndex implements AutoCloseable {

  private final Map<String, Map<String, Wheel>> projects = new ConcurrentHashMap<>();
  private final RecordingHttpServer server;

  private PackageIndex(InetAddress address) throws IOException {
    server =
        new RecordingHttpServer(address, "package-index", (method, path, host) -> answer(path));
  }

  /** Serves the wheels on {@code address} and an ephemeral port. */
  public static PackageIndex serve(InetAddress address, Wheel... wheels) throws IOException {
    PackageIndex index = new PackageIndex(address);
    for (Wheel w : wheels) {
      index.add(w);
    }
    return index;
  }

  /** Publishes one more wheel (a later version, another project). */
  public PackageIndex add(Wheel wheel) {
    projects
        .computeIfAbsent(wheel.normalizedName(), n -> new ConcurrentHashMap<>())
        .put(wheel.fileName(), wheel);
    return this;
  }

  /** {@code http://<address>:<port>/simple/}: pip's {@code --index-url}. */
  public String simpleUrl() {
    return "http://" + server.hostPort() + "/simple/";
  }

  /**
   * The host for pip's {@code --trusted-host}: pip ignores a plain-HTTP index on any host but
   * localhost and loopback ("not a trusted or secure host") unless it is named there.
   */
  public String trustedHost() {
    return address().getHostAddress();
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

  /** The requests so far that downloaded this wheel's file. */
  public List<ServedRequest> downloadsOf(Wheel wheel) {
    return server.requests(
        r -> r.path().equals("/packages/" + wheel.fileName()) && r.status() == 200);
  }

  /** The requests so far that match. */
  public List<ServedRequest> requests(Predicate<ServedRequest> which) {
    return server.requests(which);
  }

  private RecordingHttpServer.Reply answer(String path) {
    if (path.equals("/simple")) {
      return redirect("/simple/");
    }
    if (path.equals("/simple/")) {
      StringBuilder html = page("Simple index");
      new TreeMap<>(projects)
          .keySet()
          .forEach(
              n ->
                  html.append("<a href=\"")
                      .append(n)
                      .append("/\">")
                      .append(n)
                      .append("</a><br>\n"));
      return html(html);
    }
    if (path.startsWith("/simple/")) {
      String name = path.substring("/simple/".length());
      String bare = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
      if (bare.isEmpty() || bare.contains("/")) {
        return RecordingHttpServer.Reply.notFound();
      }
      String normalized = Wheel.normalize(bare);
      if (!name.equals(normalized + "/")) {
        return redirect("/simple/" + normalized + "/");
      }
      Map<String, Wheel> files = projects.get(normalized);
      if (files == null) {
        return RecordingHttpServer.Reply.notFound();
      }
      StringBuilder html = page("Links for " + normalized);
      new TreeMap<>(files)
          .values()
          .forEach(
              w ->
                  html.append("<a href=\"../../packages/")
                      .append(w.fileName())
                      .append("#sha256=")
                      .append(w.sha256Hex())
                      .append("\">")
                      .append(w.fileName())
                      .append("</a><br>\n"));
      return html(html);
    }
    if (path.startsWith("/packages/")) {
      String file = path.substring("/packages/".length());
      return projects.values().stream()
          .map(files -> files.get(file))
          .filter(w -> w != null)
          .findFirst()
          .map(w -> new RecordingHttpServer.Reply(200, "application/octet-stream", w.bytes()))
          .orElse(RecordingHttpServer.Reply.notFound());
    }
    return RecordingHttpServer.Reply.notFound();
  }

  private static StringBuilder page(String title) {
    return new StringBuilder(
            "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
                + "<title>")
        .append(title)
        .append("</title></head><body>\n");
  }

  private static RecordingHttpServer.Reply html(StringBuilder page) {
    return new RecordingHttpServer.Reply(
        200,
        "text/html; charset=utf-8",
        page.append("</body></html>\n").toString().getBytes(StandardCharsets.UTF_8));
  }

  private static RecordingHttpServer.Reply redirect(String location) {
    return new RecordingHttpServer.Reply(301, "text/plain", new byte[0]).withLocation(location);
  }

  @Override
  public void close() {
    server.close();
  }
}
