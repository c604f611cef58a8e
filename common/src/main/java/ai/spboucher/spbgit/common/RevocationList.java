package ai.spboucher.spbgit.common;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Revoked job token ids ({@code jti}) with their expiry, persisted as JSON so revocations survive
 * restarts and can be read by the stand-alone hook. Entries are dropped once their token has
 * expired anyway.
 *
 * <p>{@link #isRevoked} is safe from any thread and never touches the disk; {@link #revoke} writes
 * the file (temp file, fsync, atomic rename) and so belongs on a worker thread.
 */
public final class RevocationList {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path file;
  private final Clock clock;
  private final Map<String, Instant> revoked = new ConcurrentHashMap<>();

  private RevocationList(Path file, Clock clock) {
    this.file = file;
    this.clock = clock;
  }

  /** Loads the list from {@code file}; a missing file is an empty list. Blocking. */
  public static RevocationList load(Path file, Clock clock) throws IOException {
    RevocationList list = new RevocationList(file, clock);
    if (Files.exists(file)) {
      JsonNode root = JSON.readTree(file.toFile());
      JsonNode entries = root == null ? null : root.get("revoked");
      if (entries == null || !entries.isArray()) {
        throw new IOException(file + " is not a revocation list");
      }
      for (JsonNode entry : entries) {
        JsonNode jti = entry.get("jti");
        JsonNode exp = entry.get("exp");
        if (jti == null
            || !jti.isTextual()
            || exp == null
            || !exp.isIntegralNumber()
            || !exp.canConvertToLong()) {
          throw new IOException(
              file + " has a revocation entry without a textual jti and an integer exp");
        }
        list.revoked.put(jti.textValue(), Instant.ofEpochSecond(exp.longValue()));
      }
    }
    return list;
  }

  public boolean isRevoked(String tokenId) {
    return revoked.containsKey(tokenId);
  }

  /** Revokes {@code tokenId} (kept until {@code expiresAt}) and persists the list. Blocking. */
  public synchronized void revoke(String tokenId, Instant expiresAt) throws IOException {
    Instant now = clock.instant();
    revoked.values().removeIf(exp -> exp.isBefore(now));
    revoked.put(tokenId, expiresAt);
    persist();
  }

  private void persist() throws IOException {
    ObjectNode root = JSON.createObjectNode();
    ArrayNode entries = root.putArray("revoked");
    revoked.forEach(
        (jti, exp) -> entries.addObject().put("jti", jti).put("exp", exp.getEpochSecond()));
    Files.createDirectories(file.toAbsolutePath().getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    DurableFiles.write(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(root));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
