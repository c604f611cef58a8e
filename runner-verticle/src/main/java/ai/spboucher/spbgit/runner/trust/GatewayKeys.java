package ai.spboucher.spbgit.runner.trust;

import ai.spboucher.spbgit.common.EcKeys;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * The gateway's job-bus public keys, which every job request and cancel must be signed with, by key
 * id: {@code SPB_GATEWAY_KEYS}, one PEM file or a directory of {@code *.pub.pem} (the current key
 * and the retired ones: what the gateway keeps in {@code <data>/keys/job-bus/}). Read at start,
 * where a location with no key stops the runner. Read again when a message names a key id not known
 * yet, at most once per {@link #REREAD_INTERVAL}: the gateway's key rotation needs no runner
 * restart, and forged key ids cannot make the runner read its disk in a loop.
 *
 * <p>Thread-safe. {@link #key} may block for a re-read (a few small files).
 */
public final class GatewayKeys {

  /** The least time between two re-reads for unknown key ids. */
  public static final Duration REREAD_INTERVAL = Duration.ofSeconds(5);

  private static final System.Logger LOG = System.getLogger(GatewayKeys.class.getName());

  private final Path location;
  private final Clock clock;
  private volatile Map<String, PublicKey> keys;
  private Instant readAt;

  private GatewayKeys(Path location, Clock clock, Map<String, PublicKey> keys) {
    this.location = location;
    this.clock = clock;
    this.keys = keys;
    this.readAt = clock.instant();
  }

  /**
   * Reads the keys at {@code location}. Blocking.
   *
   * @throws IllegalStateException with what to do, when there is no location or no key there
   */
  public static GatewayKeys load(Path location, Clock clock) {
    if (location == null) {
      throw new IllegalStateException(
          "SPB_GATEWAY_KEYS is not set: a runner runs only job requests signed by the gateway;"
              + " give it the gateway's job-bus public keys (the directory <gateway data>/keys/job-bus,"
              + " or a copy of it; docs/operations.md)");
    }
    Map<String, PublicKey> keys;
    try {
      keys = read(location);
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot read the gateway's job-bus keys at " + location + " (SPB_GATEWAY_KEYS): " + e, e);
    }
    if (keys.isEmpty()) {
      throw new IllegalStateException(
          "no gateway job-bus key in "
              + location
              + " (SPB_GATEWAY_KEYS): copy the gateway's <data>/keys/job-bus/*.pub.pem there");
    }
    return new GatewayKeys(location, clock, keys);
  }

  /** Where the keys are read from. */
  public Path location() {
    return location;
  }

  /** The key ids known now. */
  public Iterable<String> keyIds() {
    return keys.keySet();
  }

  /**
   * The key named {@code kid}, or null: after a re-read when it is not known yet and the last
   * re-read is long enough ago.
   */
  public PublicKey key(String kid) {
    PublicKey key = keys.get(kid);
    return key != null ? key : reread(kid);
  }

  private synchronized PublicKey reread(String kid) {
    Instant now = clock.instant();
    if (keys.containsKey(kid) || now.isBefore(readAt.plus(REREAD_INTERVAL))) {
      return keys.get(kid);
    }
    readAt = now;
    try {
      Map<String, PublicKey> read = read(location);
      if (!read.isEmpty()) {
        if (!read.keySet().equals(keys.keySet())) {
          LOG.log(
              System.Logger.Level.INFO,
              "gateway job-bus keys re-read from " + location + ": " + read.keySet());
        }
        keys = read;
      }
    } catch (IOException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot re-read the gateway's job-bus keys at " + location + ": " + e.getMessage());
    }
    return keys.get(kid);
  }

  /** Every P-256 key at {@code location}; a file that is none is skipped with a warning. */
  private static Map<String, PublicKey> read(Path location) throws IOException {
    Map<String, PublicKey> keys = new HashMap<>();
    if (Files.isDirectory(location)) {
      try (DirectoryStream<Path> files = Files.newDirectoryStream(location, "*.pub.pem")) {
        for (Path file : files) {
          add(file, keys);
        }
      }
    } else {
      if (!Files.exists(location)) {
        throw new IOException("no such file or directory");
      }
      add(location, keys);
    }
    return Map.copyOf(keys);
  }

  private static void add(Path file, Map<String, PublicKey> keys) throws IOException {
    try {
      PublicKey key = EcKeys.readPublic(file);
      keys.put(EcKeys.keyId(key), key);
    } catch (GeneralSecurityException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "ignoring " + file + ": not a P-256 public key (" + e.getMessage() + ")");
    }
  }
}
