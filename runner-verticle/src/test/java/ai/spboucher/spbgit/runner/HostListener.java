package ai.spboucher.spbgit.runner;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Collections;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP listener on one of this machine's own addresses that counts every connection it gets and
 * answers {@code LEAKED}: what a sandbox test aims at to prove a way out is closed on both sides.
 * Never an outside address.
 */
record HostListener(ServerSocket socket, AtomicInteger accepted) implements AutoCloseable {

  static HostListener listen(InetAddress address) throws IOException {
    HostListener l = new HostListener(new ServerSocket(), new AtomicInteger());
    l.socket.bind(new InetSocketAddress(address, 0));
    Thread t =
        new Thread(
            () -> {
              while (!l.socket.isClosed()) {
                try (Socket s = l.socket.accept()) {
                  l.accepted.incrementAndGet();
                  s.getOutputStream().write("HTTP/1.0 200 OK\r\n\r\nLEAKED\n".getBytes());
                } catch (IOException e) {
                  return;
                }
              }
            },
            "host-listener-" + l.port());
    t.setDaemon(true);
    t.start();
    return l;
  }

  /** Null when the address cannot be bound here (no IPv6, no bridge). */
  static HostListener listenQuietly(InetAddress address) {
    try {
      return listen(address);
    } catch (IOException e) {
      return null;
    }
  }

  /** A non-loopback IPv4 address of this machine that is not the docker bridge. */
  static InetAddress hostAddress() throws IOException {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nic.isUp()
          && !nic.isLoopback()
          && !nic.getName().startsWith("docker")
          && !nic.getName().startsWith("br-")
          && !nic.getName().startsWith("veth")) {
        for (InetAddress a : Collections.list(nic.getInetAddresses())) {
          if (a instanceof Inet4Address) {
            return a;
          }
        }
      }
    }
    throw new IOException("this machine has no non-loopback IPv4 address");
  }

  /** The docker bridge's IPv4 address, when there is a bridge. */
  static Optional<InetAddress> dockerBridge() throws IOException {
    NetworkInterface docker0 = NetworkInterface.getByName("docker0");
    if (docker0 == null) {
      return Optional.empty();
    }
    return Collections.list(docker0.getInetAddresses()).stream()
        .filter(a -> a instanceof Inet4Address)
        .findFirst();
  }

  int port() {
    return socket.getLocalPort();
  }

  String hostPort() {
    InetAddress a = socket.getInetAddress();
    return (a instanceof Inet6Address
            ? "[" + a.getHostAddress().replaceAll("%.*", "") + "]"
            : a.getHostAddress())
        + ":"
        + port();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
