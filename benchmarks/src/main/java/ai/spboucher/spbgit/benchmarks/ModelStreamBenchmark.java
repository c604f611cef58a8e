package ai.spboucher.spbgit.benchmarks;

import ai.spboucher.spbgit.runner.model.ModelConfig;
import ai.spboucher.spbgit.runner.model.ModelEndpoint;
import ai.spboucher.spbgit.runner.model.ModelProvider;
import ai.spboucher.spbgit.runner.model.ProviderClient;
import ai.spboucher.spbgit.runner.model.TokenMeter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The runner's model endpoint against the same streaming provider called directly, interleaved in
 * one run: time to the first streamed event (p50, p99) and stream throughput, each through the
 * endpoint's unix socket and straight to the provider over TCP, every client on one kept-alive
 * connection; and the endpoint's CPU (its Vert.x threads, from {@link ThreadMXBean}) per 1,000
 * streamed chunks. The provider is a minimal OpenAI-compatible chat stream in this class (the JDK's
 * HTTP server, one flush per chunk, each chunk a realistic 150-byte {@code chat.completion.chunk}).
 *
 * <p>Run: {@code java -cp benchmarks/target/spb-benchmarks.jar
 * ai.spboucher.spbgit.benchmarks.ModelStreamBenchmark [firstByteRuns] [throughputRuns]
 * [chunksPerStream]}.
 */
public final class ModelStreamBenchmark {

  private static final String KEY = "sk-bench-0123456789abcdefghijklmnopqrstuvwxyz";
  private static final String PATH = "/v1/chat/completions";

  private ModelStreamBenchmark() {}

  public static void main(String[] args) throws Exception {
    int firstByteRuns = args.length > 0 ? Integer.parseInt(args[0]) : 400;
    int throughputRuns = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int chunks = args.length > 2 ? Integer.parseInt(args[2]) : 20_000;
    // Both sides of the direct path without Nagle's delay, as the endpoint's own client has it.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    Path dir = Files.createTempDirectory("spb-model-bench");
    HttpServer provider = startProvider();
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    String base = "http://127.0.0.1:" + provider.getAddress().getPort();
    ModelConfig config =
        new ModelConfig(
            ModelProvider.OPENAI,
            URI.create(base),
            KEY,
            "bench-model",
            List.of("bench-model"),
            Long.MAX_VALUE / 4,
            Duration.ofSeconds(60),
            4);
    ModelEndpoint endpoint =
        ModelEndpoint.start(
            vertx,
            dir.resolve("model.sock"),
            new ProviderClient(config),
            "bench-model",
            new TokenMeter(Long.MAX_VALUE / 4),
            record -> {});
    try (Client direct = Client.tcp(provider.getAddress().getPort());
        Client proxied = Client.unix(endpoint.socketPath())) {
      // Warm-up: both paths, so the JIT has compiled what both measure.
      for (int i = 0; i < 300; i++) {
        direct.stream(20);
        proxied.stream(20);
      }
      for (int i = 0; i < 5; i++) {
        direct.stream(chunks);
        proxied.stream(chunks);
      }
      List<Double> directFirst = new ArrayList<>();
      List<Double> proxiedFirst = new ArrayList<>();
      for (int i = 0; i < firstByteRuns; i++) {
        boolean directFirstThisTime = i % 2 == 0;
        if (directFirstThisTime) {
          directFirst.add(direct.stream(20).firstByteMs());
        }
        proxiedFirst.add(proxied.stream(20).firstByteMs());
        if (!directFirstThisTime) {
          directFirst.add(direct.stream(20).firstByteMs());
        }
      }
      List<Double> directRate = new ArrayList<>();
      List<Double> proxiedRate = new ArrayList<>();
      long cpu = 0;
      long streamed = 0;
      for (int i = 0; i < throughputRuns; i++) {
        directRate.add(direct.stream(chunks).megabytesPerSecond());
        long before = vertxCpuNanos();
        Run run = proxied.stream(chunks);
        cpu += vertxCpuNanos() - before;
        streamed += chunks;
        proxiedRate.add(run.megabytesPerSecond());
      }
      report(directFirst, proxiedFirst, directRate, proxiedRate, cpu, streamed, chunks);
    } finally {
      endpoint.close();
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      provider.stop(0);
      Files.deleteIfExists(dir);
    }
  }

  private static void report(
      List<Double> directFirst,
      List<Double> proxiedFirst,
      List<Double> directRate,
      List<Double> proxiedRate,
      long cpuNanos,
      long chunks,
      int chunksPerStream) {
    double p50d = percentile(directFirst, 50);
    double p50p = percentile(proxiedFirst, 50);
    double p99d = percentile(directFirst, 99);
    double p99p = percentile(proxiedFirst, 99);
    double rateD = Stats.median(directRate);
    double rateP = Stats.median(proxiedRate);
    System.out.printf(
        Locale.ROOT,
        "first streamed byte (%d runs each): direct p50 %.3f ms p99 %.3f ms; endpoint p50 %.3f ms"
            + " p99 %.3f ms; added p50 %+.3f ms p99 %+.3f ms%n",
        directFirst.size(),
        p50d,
        p99d,
        p50p,
        p99p,
        p50p - p50d,
        p99p - p99d);
    System.out.printf(
        Locale.ROOT,
        "throughput (%d streams of %d chunks each, median): direct %.1f MB/s; endpoint %.1f MB/s;"
            + " ratio %.2fx%n",
        directRate.size(),
        chunksPerStream,
        rateD,
        rateP,
        rateP / rateD);
    System.out.printf(
        Locale.ROOT,
        "endpoint CPU (its Vert.x threads): %.2f ms per 1,000 streamed chunks (%d chunks)%n",
        cpuNanos / 1e6 / (chunks / 1000.0),
        chunks);
  }

  static double percentile(List<Double> values, int p) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
  }

  /** CPU time of every Vert.x thread (the endpoint's event loops, its client, its workers). */
  private static long vertxCpuNanos() {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long total = 0;
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().startsWith("vert.x-")) {
        long cpu = threads.getThreadCpuTime(info.getThreadId());
        total += Math.max(0, cpu);
      }
    }
    return total;
  }

  // --- The provider: an OpenAI-compatible chat stream, as fast as it can write

  private static HttpServer startProvider() throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.createContext(PATH, ModelStreamBenchmark::stream);
    server.setExecutor(Executors.newCachedThreadPool());
    server.start();
    return server;
  }

  private static void stream(HttpExchange exchange) throws IOException {
    String request = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    int chunks = Integer.parseInt(request.replaceAll("(?s).*\"chunks\":(\\d+).*", "$1"));
    exchange.getResponseHeaders().set("content-type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    try (OutputStream out = exchange.getResponseBody()) {
      for (int i = 0; i < chunks; i++) {
        out.write(
            ("data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                    + "\"model\":\"bench-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
                    + "\" token\"},\"finish_reason\":null}],\"usage\":null}\n\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
      out.write(
          ("data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,"
                  + "\"completion_tokens\":"
                  + chunks
                  + "}}\n\ndata: [DONE]\n\n")
              .getBytes(StandardCharsets.US_ASCII));
    }
  }

  // --- The client: HTTP/1.1 on one kept-alive connection, reading the chunked stream as it comes

  /** One streamed call: when its first chunk came, and how fast the rest did. */
  record Run(double firstByteMs, long bytes, double seconds, long chunks) {
    double megabytesPerSecond() {
      return bytes / 1e6 / seconds;
    }
  }

  private static final class Client implements AutoCloseable {
    private final SocketChannel channel;
    private final InputStream in;
    private final OutputStream out;

    private Client(SocketChannel channel) {
      this.channel = channel;
      this.in = new BufferedInputStream(Channels.newInputStream(channel), 64 << 10);
      this.out = Channels.newOutputStream(channel);
    }

    static Client tcp(int port) throws IOException {
      SocketChannel channel =
          SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      return new Client(channel);
    }

    static Client unix(Path socket) throws IOException {
      SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
      channel.connect(UnixDomainSocketAddress.of(socket));
      return new Client(channel);
    }

    Run stream(int chunks) throws IOException {
      byte[] body =
          ("{\"model\":\"bench-model\",\"stream\":true,\"chunks\":"
                  + chunks
                  + ",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}")
              .getBytes(StandardCharsets.US_ASCII);
      long start = System.nanoTime();
      ByteArrayOutputStream request = new ByteArrayOutputStream();
      request.writeBytes(
          ("POST "
                  + PATH
                  + " HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                  + "content-length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      request.writeBytes(body);
      // One write: the head and the body in one segment.
      out.write(request.toByteArray());
      out.flush();
      String status = line();
      if (!status.startsWith("HTTP/1.1 200")) {
        throw new IOException("answered " + status);
      }
      boolean chunked = false;
      for (String header = line(); !header.isEmpty(); header = line()) {
        chunked |= header.toLowerCase(Locale.ROOT).equals("transfer-encoding: chunked");
      }
      if (!chunked) {
        throw new IOException("not a chunked stream");
      }
      long first = 0;
      long bytes = 0;
      long parts = 0;
      long last = start;
      while (true) {
        int size = Integer.parseInt(line().split(";")[0].trim(), 16);
        if (size == 0) {
          line();
          break;
        }
        byte[] data = in.readNBytes(size);
        if (data.length < size) {
          throw new IOException("stream ended early");
        }
        if (first == 0) {
          first = System.nanoTime();
        }
        bytes += size;
        parts++;
        line();
        last = System.nanoTime();
      }
      return new Run((first - start) / 1e6, bytes, (last - start) / 1e9, Math.max(0, parts - 1));
    }

    private String line() throws IOException {
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      for (int b = in.read(); b != '\n'; b = in.read()) {
        if (b < 0) {
          throw new IOException("connection closed");
        }
        if (b != '\r') {
          line.write(b);
        }
      }
      return line.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }
}
