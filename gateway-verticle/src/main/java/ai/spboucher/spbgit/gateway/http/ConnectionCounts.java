package ai.spboucher.spbgit.gateway.http;

import java.util.HashMap;
import java.util.Map;

/**
 * Open connections, in all and by client address, against a cap for each: one client cannot take
 * every slot, so a slow-loris from one address leaves room for the others.
 *
 * <p>Threading: not thread-safe; the gateway calls it on its HTTP server's event loop only.
 */
final class ConnectionCounts {

  /** Whether a new connection may stay, and if not, which cap it met. */
  enum Admission {
    ADMITTED,
    OVER_TOTAL,
    OVER_ADDRESS
  }

  private final int maxTotal;
  private final int maxPerAddress;
  private final Map<String, Integer> byAddress = new HashMap<>();
  private int total;

  ConnectionCounts(int maxTotal, int maxPerAddress) {
    this.maxTotal = maxTotal;
    this.maxPerAddress = maxPerAddress;
  }

  /** Counts the connection when it fits under both caps; {@link #release} it when it closes. */
  Admission admit(String address) {
    if (total >= maxTotal) {
      return Admission.OVER_TOTAL;
    }
    int fromAddress = byAddress.getOrDefault(address, 0);
    if (fromAddress >= maxPerAddress) {
      return Admission.OVER_ADDRESS;
    }
    byAddress.put(address, fromAddress + 1);
    total++;
    return Admission.ADMITTED;
  }

  /** An admitted connection from {@code address} closed. */
  void release(String address) {
    Integer fromAddress = byAddress.get(address);
    if (fromAddress == null) {
      throw new IllegalStateException("no connection from " + address + " was admitted");
    }
    if (fromAddress == 1) {
      byAddress.remove(address);
    } else {
      byAddress.put(address, fromAddress - 1);
    }
    total--;
  }

  int total() {
    return total;
  }

  int from(String address) {
    return byAddress.getOrDefault(address, 0);
  }
}
