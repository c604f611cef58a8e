package ai.spboucher.spbgit.runner.sockets;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The server side of one of a job's sockets (the egress proxy, the model endpoint, the git relay): a unix domain
 * socket in the job's egress directory, mode 0666 so the container's unprivileged user can connect, one accept
 * thread, and a bounded pool of daemon threads serving the connections. Beyond {@code maxConnections} open
 * connections a new one gets the busy answer and is closed at once, from the accept thread, without blocking it.
 *
 * <p>Threading: {@link #bind} binds and returns; {@link #serve} starts the accept thread. Each connection runs on a
 * pool thread; a connection may use {@link #workers()} for a second thread (one per relay direction) and
 * {@link #timer()} for watchdogs. {@link #close()} is idempotent: it stops accepting, aborts every open connection,
 * interrupts the pool, waits up to 2 s for it, and deletes the socket file.
 */
public final class JobSocketServer implements AutoCloseable {

  /** One accepted connection, served on a pool thread. */
  public interface Connection extends Runnable {

    /** Cuts the connection now; called by {@link #close()} from another thread. */
    void abort();
  }

  private static final System.Logger LOG = System.getLogger(JobSocketServer.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final Path socketPath;
  private final ServerSocketChannel server;
  private final byte[] busyAnswer;
  private final Semaphore permits;
  private final Set<Connection> open = ConcurrentHashMap.newKeySet();
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final String name;
  private Thread acceptor;
  private volatile boolean closed;

  private JobSocketServer(Path socketPath, ServerSocketChannel server, String kind, int maxConnections,
                          int threadsPerConnection, byte[] busyAnswer) {
    this.socketPath = socketPath;
    this.server = server;
    this.busyAnswer = busyAnswer.clone();
    this.permits = new Semaphore(maxConnections);
    this.name = "spb-" + kind + "-" + INSTANCES.incrementAndGet();
    // Slack for threads still returning to the pool after their connection ended.
    this.workers = new ThreadPoolExecutor(0, threadsPerConnection * maxConnections + 4, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), daemonThreads(name + "-worker-"));
    this.timer = new ScheduledThreadPoolExecutor(1, daemonThreads(name + "-timer-"));
    this.timer.setRemoveOnCancelPolicy(true);
  }

  /**
   * Binds {@code socketPath}, which must not exist, with mode 0666; nothing is accepted until {@link #serve}.
   *
   * @param kind a word for thread names and logs ({@code egress}, {@code model}, {@code git})
   * @param threadsPerConnection how many pool threads one connection may use at once (1, or 2 for a relay)
   * @param busyAnswer the complete HTTP answer for a connection beyond the limit
   */
  public static JobSocketServer bind(Path socketPath, String kind, int maxConnections, int threadsPerConnection,
                                     byte[] busyAnswer) throws IOException {
    if (maxConnections < 1 || threadsPerConnection < 1) {
      throw new IllegalArgumentException("maxConnections and threadsPerConnection must be positive");
    }
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    boolean bound = false;
    try {
      server.bind(UnixDomainSocketAddress.of(socketPath), maxConnections);
      bound = true;
      Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
      return new JobSocketServer(socketPath, server, kind, maxConnections, threadsPerConnection, busyAnswer);
    } catch (IOException | RuntimeException e) {
      server.close();
      if (bound) {
        Files.deleteIfExists(socketPath);
      }
      throw e;
    }
  }

  /** Starts accepting; {@code connections} turns each accepted channel into the connection that serves it. */
  public synchronized void serve(Function<SocketChannel, ? extends Connection> connections) {
    Objects.requireNonNull(connections, "connections");
    if (acceptor != null) {
      throw new IllegalStateException("already serving");
    }
    acceptor = new Thread(() -> acceptLoop(connections), name + "-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public Path socketPath() {
    return socketPath;
  }

  /** Connections currently being served. */
  public int openConnections() {
    return open.size();
  }

  public ThreadPoolExecutor workers() {
    return workers;
  }

  public ScheduledThreadPoolExecutor timer() {
    return timer;
  }

  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    Thread accepting;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      accepting = acceptor;
    }
    try {
      server.close();
      if (accepting != null) {
        accepting.join(2000);
      }
      open.forEach(Connection::abort);
      timer.shutdownNow();
      workers.shutdownNow();
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot close " + socketPath + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        Files.deleteIfExists(socketPath);
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot delete " + socketPath + ": " + e);
      }
    }
  }

  private void acceptLoop(Function<SocketChannel, ? extends Connection> connections) {
    while (!closed) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        // Typically out of file descriptors: back off instead of spinning, keep serving.
        LOG.log(System.Logger.Level.WARNING, "accept failed on " + socketPath + ": " + e);
        sleepQuietly(100);
        continue;
      }
      admit(client, connections);
    }
  }

  private void admit(SocketChannel client, Function<SocketChannel, ? extends Connection> connections) {
    if (!permits.tryAcquire()) {
      refuseBusy(client);
      return;
    }
    Connection connection = connections.apply(client);
    open.add(connection);
    try {
      workers.execute(() -> {
        try {
          connection.run();
        } finally {
          ended(connection);
        }
      });
    } catch (RejectedExecutionException e) {
      ended(connection);
      refuseBusy(client);
    }
  }

  private void ended(Connection connection) {
    if (open.remove(connection)) {
      permits.release();
    }
  }

  private void refuseBusy(SocketChannel client) {
    try (client) {
      client.configureBlocking(false);
      client.write(ByteBuffer.wrap(busyAnswer));
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not send the busy answer: " + e);
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
