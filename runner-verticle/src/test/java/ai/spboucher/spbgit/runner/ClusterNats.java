package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.testsupport.NatsServerProcess;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A three-node NATS cluster on 127.0.0.1: three {@code nats-server} processes with routes to each
 * other, each with JetStream and its own store, named {@code n1} to {@code n3}. A test can kill a
 * node like a crash, restart it, and ask where a client is connected or which node leads a stream.
 */
public final class ClusterNats implements AutoCloseable {

  private static final String CLUSTER = "spb-test";

  private final Map<String, Node> nodes = new LinkedHashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static final class Node {
    final String name;
    final Path dir;
    final int clientPort;
    final int routePort;
    final int monitorPort;
    Process process;

    Node(String name, Path dir) throws IOException {
      this.name = name;
      this.dir = dir;
      this.clientPort = NatsServerProcess.freePort();
      this.routePort = NatsServerProcess.freePort();
      this.monitorPort = NatsServerProcess.freePort();
    }
  }

  private ClusterNats() {}

  /**
   * Starts the three servers and waits until JetStream answers (the cluster has elected its meta
   * leader).
   */
  public static ClusterNats start(Path dir) throws Exception {
    ClusterNats cluster = new ClusterNats();
    for (int i = 1; i <= 3; i++) {
      String name = "n" + i;
      cluster.nodes.put(name, new Node(name, Files.createDirectories(dir.resolve(name))));
    }
    String routes =
        cluster.nodes.values().stream()
            .map(n -> "nats-route://127.0.0.1:" + n.routePort)
            .collect(Collectors.joining(", "));
    for (Node node : cluster.nodes.values()) {
      Files.writeString(
          node.dir.resolve("nats-server.conf"),
          """
          server_name: %s
          listen: 127.0.0.1:%d
          http: 127.0.0.1:%d
          jetstream { store_dir: "%s" }
          cluster {
            name: %s
            listen: 127.0.0.1:%d
            routes: [ %s ]
          }
          """
              .formatted(
                  node.name,
                  node.clientPort,
                  node.monitorPort,
                  node.dir.resolve("store"),
                  CLUSTER,
                  node.routePort,
                  routes));
    }
    try {
      for (Node node : cluster.nodes.values()) {
        cluster.launch(node);
      }
      cluster.awaitJetStream(Duration.ofSeconds(60));
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return cluster;
  }

  /** The client URLs of all three nodes, comma-separated, as {@code SPB_NATS_URL} takes them. */
  public String urls() {
    return nodes.values().stream()
        .map(n -> "nats://127.0.0.1:" + n.clientPort)
        .collect(Collectors.joining(","));
  }

  public List<String> names() {
    return List.copyOf(nodes.keySet());
  }

  /** SIGKILL, like a crash: the node's store stays as it was. */
  public void kill(String name) throws InterruptedException {
    Node node = nodes.get(name);
    node.process.destroyForcibly();
    if (!node.process.waitFor(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("nats-server " + name + " did not die from SIGKILL");
    }
  }

  /** Starts a killed node again on its ports and store. */
  public void restart(String name) throws Exception {
    launch(nodes.get(name));
  }

  /**
   * The node a client with this connection name is connected to, from the nodes' {@code /connz};
   * null if none.
   */
  public String nodeOf(String connectionName) throws Exception {
    for (Node node : nodes.values()) {
      if (!node.process.isAlive()) {
        continue;
      }
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + node.monitorPort + "/connz?limit=1024"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      JsonArray connections = new JsonObject(r.body()).getJsonArray("connections", new JsonArray());
      for (Object c : connections) {
        if (connectionName.equals(((JsonObject) c).getString("name"))) {
          return node.name;
        }
      }
    }
    return null;
  }

  /** The node leading a stream's replicas, as JetStream reports it. */
  public String streamLeader(String stream) throws Exception {
    try (Connection connection = connect()) {
      return connection.jetStreamManagement().getStreamInfo(stream).getClusterInfo().getLeader();
    }
  }

  /**
   * A connection to whichever nodes are up. JetStream requests get 10 s (the client's default is 2
   * s): a cluster that has just lost a node answers once it has elected new leaders.
   */
  public Connection connect() throws Exception {
    return Nats.connect(
        new io.nats.client.Options.Builder()
            .server(urls())
            .connectionTimeout(Duration.ofSeconds(10))
            .errorListener(new io.nats.client.ErrorListener() {})
            .build());
  }

  /** Asks the stream's leader to step down; another node is elected. Returns the new leader. */
  public String stepDown(String stream) throws Exception {
    String before = streamLeader(stream);
    try (Connection connection = connect()) {
      connection.request(
          "$JS.API.STREAM.LEADER.STEPDOWN." + stream, new byte[0], Duration.ofSeconds(5));
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (System.nanoTime() < deadline) {
      String leader = streamLeaderOrNull(stream);
      if (leader != null && !leader.equals(before)) {
        return leader;
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "no new leader for " + stream + " after " + before + " stepped down");
  }

  private String streamLeaderOrNull(String stream) {
    try {
      return streamLeader(stream);
    } catch (Exception e) {
      return null; // Between leaders.
    }
  }

  private void launch(Node node) throws Exception {
    node.process =
        new ProcessBuilder("nats-server", "-c", node.dir.resolve("nats-server.conf").toString())
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(node.dir.resolve("nats-server.log").toFile()))
            .start();
    long deadline = System.currentTimeMillis() + 15_000;
    while (System.currentTimeMillis() < deadline) {
      try (Socket s = new Socket("127.0.0.1", node.clientPort)) {
        return;
      } catch (IOException e) {
        if (!node.process.isAlive()) {
          throw new IOException(
              "nats-server "
                  + node.name
                  + " exited: "
                  + Files.readString(node.dir.resolve("nats-server.log")));
        }
        Thread.sleep(50);
      }
    }
    throw new IOException("nats-server " + node.name + " did not start on port " + node.clientPort);
  }

  private void awaitJetStream(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try (Connection connection = connect()) {
        connection.jetStreamManagement().getAccountStatistics();
        return;
      } catch (Exception e) {
        last = e;
        Thread.sleep(250);
      }
    }
    throw new IOException("the cluster's JetStream did not become ready within " + timeout, last);
  }

  @Override
  public void close() throws InterruptedException {
    for (Node node : nodes.values()) {
      if (node.process != null && node.process.isAlive()) {
        node.process.destroy();
        if (!node.process.waitFor(10, TimeUnit.SECONDS)) {
          node.process.destroyForcibly();
        }
      }
    }
  }

  /** Where each node's log is, for failure messages. */
  public List<Path> logs() {
    List<Path> logs = new ArrayList<>();
    nodes.values().forEach(n -> logs.add(n.dir.resolve("nats-server.log")));
    return logs;
  }
}
