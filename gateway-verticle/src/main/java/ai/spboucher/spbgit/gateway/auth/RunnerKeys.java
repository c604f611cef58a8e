package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.common.EcKeys;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.util.Map;
import java.util.TreeMap;

/**
 * The runners the gateway seals job tokens to, as SSH has {@code authorized_keys}: every {@code
 * *.pub.pem} in one directory ({@code SPB_RUNNER_KEYS}, by default {@code <data>/keys/runners/}) is
 * a runner's public key. Adding a runner is copying its {@code runner-key.pub.pem} in; removing one
 * is deleting its file. The directory is looked at again on every use and re-read when a file was
 * added, removed or changed, so neither needs a restart. A file that is not a P-256 public key is
 * skipped with a warning; a missing directory has no keys.
 *
 * <p>Threading: {@link #current} blocks (it lists the directory and reads what changed): call it on
 * a worker thread. Thread-safe.
 */
public final class RunnerKeys {

  private static final System.Logger LOG = System.getLogger(RunnerKeys.class.getName());

  private final Path dir;

  /** The names, sizes and times of the files {@link #keys} was read from. */
  private String readFrom;

  private Map<String, PublicKey> keys = Map.of();

  public RunnerKeys(Path dir) {
    this.dir = dir;
  }

  public Path dir() {
    return dir;
  }

  /** The authorized runner keys by key id, read again if the directory changed. Blocking. */
  public synchronized Map<String, PublicKey> current() throws IOException {
    Map<String, Seen> files = list();
    String now = files.toString();
    if (!now.equals(readFrom)) {
      keys = read(files.keySet());
      readFrom = now;
      LOG.log(
          System.Logger.Level.INFO,
          keys.size() + " runner key(s) in " + dir + ": " + String.join(", ", keys.keySet()));
    }
    return keys;
  }

  /** Each {@code *.pub.pem} with its size and modification time, by name. */
  private Map<String, Seen> list() throws IOException {
    Map<String, Seen> files = new TreeMap<>();
    if (!Files.isDirectory(dir)) {
      return files;
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, "*.pub.pem")) {
      for (Path entry : entries) {
        try {
          BasicFileAttributes attributes = Files.readAttributes(entry, BasicFileAttributes.class);
          files.put(entry.getFileName().toString(), new Seen(attributes));
        } catch (NoSuchFileException e) {
          // Removed while listed: it is not a key any more.
        }
      }
    }
    return files;
  }

  private Map<String, PublicKey> read(Iterable<String> names) {
    Map<String, PublicKey> read = new TreeMap<>();
    for (String name : names) {
      Path file = dir.resolve(name);
      try {
        PublicKey key = EcKeys.readPublic(file);
        read.put(EcKeys.keyId(key), key);
      } catch (IOException | GeneralSecurityException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "ignoring " + file + ": not a P-256 public key (" + e.getMessage() + ")");
      }
    }
    return Map.copyOf(read);
  }

  /** What a listing compares: a file replaced in place has another size or time. */
  private record Seen(long size, long modified, Object fileKey) {
    Seen(BasicFileAttributes attributes) {
      this(attributes.size(), attributes.lastModifiedTime().toMillis(), attributes.fileKey());
    }
  }
}
