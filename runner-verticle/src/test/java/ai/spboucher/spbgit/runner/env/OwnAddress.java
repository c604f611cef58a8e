package ai.spboucher.spbgit.runner.env;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.util.Collections;

/**
 * This machine's own non-loopback IPv4 address: where a test serves what a sandbox may (through the
 * egress proxy) or may not (directly) reach. Found as {@code runner.HostListener} finds it; never
 * an outside address.
 */
public final class OwnAddress {

  private OwnAddress() {}

  /**
   * The first IPv4 address of an interface that is up and is neither loopback nor a docker bridge
   * or veth.
   */
  public static InetAddress nonLoopbackIpv4() throws IOException {
    for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      String name = nic.getName();
      if (nic.isUp()
          && !nic.isLoopback()
          && !name.startsWith("docker")
          && !name.startsWith("br-")
          && !name.startsWith("veth")) {
        for (InetAddress a : Collections.list(nic.getInetAddresses())) {
          if (a instanceof Inet4Address) {
            return a;
          }
        }
      }
    }
    throw new IOException("this machine has no non-loopback IPv4 address");
  }
}
