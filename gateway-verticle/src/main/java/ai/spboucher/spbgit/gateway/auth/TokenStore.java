package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.common.DurableFiles;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The owner's personal access tokens, stored in {@code tokens.json} with only a SHA-256 of each
 * secret (the secrets are 256 random bits, so a slow hash would add nothing). Lookups compare
 * against every stored hash in constant time.
 *
 * <p>Threading: {@link #authenticate} and {@link #list} read an immutable snapshot and are safe on
 * the event loop; methods that write the file ({@link #create}, {@link #revoke}, {@link #save})
 * block and are serialised.
 */
public final class TokenStore {

  /** A stored token, without its secret. */
  public record TokenRecord(
      String id, String label, Instant created, Instant lastUsed, byte[] hash) {
    public JsonObject toJson() {
      return new JsonObject()
          .put("id", id)
          .put("label", label)
          .put("created", created.toString())
          .put("last_used", lastUsed == null ? null : lastUsed.toString());
    }
  }

  /** A newly created token: the only time its secret exists outside the client. */
  public record CreatedToken(TokenRecord record, String secret) {}

  /** Prefix of every PAT secret, so they are recognisable in logs and by secret scanners. */
  public static final String SECRET_PREFIX = "spbpat_";

  private static final Duration LAST_USED_RESOLUTION = Duration.ofMinutes(1);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path file;
  private final Clock clock;
  private final AtomicReference<List<TokenRecord>> tokens;
  private volatile boolean usageUnsaved;

  private TokenStore(Path file, Clock clock, List<TokenRecord> tokens) {
    this.file = file;
    this.clock = clock;
    this.tokens = new AtomicReference<>(List.copyOf(tokens));
  }

  /** Loads the store; a missing file is an empty store. Blocking. */
  public static TokenStore load(Path file, Clock clock) throws IOException {
    List<TokenRecord> tokens = new ArrayList<>();
    if (Files.exists(file)) {
      JsonArray entries =
          new JsonObject(Files.readString(file, StandardCharsets.UTF_8)).getJsonArray("tokens");
      for (Object o : entries) {
        JsonObject t = (JsonObject) o;
        tokens.add(
            new TokenRecord(
                t.getString("id"),
                t.getString("label"),
                Instant.parse(t.getString("created")),
                t.getString("last_used") == null ? null : Instant.parse(t.getString("last_used")),
                HexFormat.of().parseHex(t.getString("sha256"))));
      }
    }
    return new TokenStore(file, clock, tokens);
  }

  public boolean isEmpty() {
    return tokens.get().isEmpty();
  }

  public List<TokenRecord> list() {
    return tokens.get();
  }

  /** Creates a token and persists the store. Blocking. */
  public synchronized CreatedToken create(String label) throws IOException {
    byte[] random = new byte[32];
    RANDOM.nextBytes(random);
    String secret = SECRET_PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    byte[] idBytes = new byte[6];
    RANDOM.nextBytes(idBytes);
    TokenRecord record =
        new TokenRecord(
            "pat_" + HexFormat.of().formatHex(idBytes),
            label,
            clock.instant(),
            null,
            sha256(secret));
    List<TokenRecord> updated = new ArrayList<>(tokens.get());
    updated.add(record);
    write(updated);
    tokens.updateAndGet(
        current -> {
          List<TokenRecord> next = new ArrayList<>(current);
          next.add(record);
          return List.copyOf(next);
        });
    return new CreatedToken(record, secret);
  }

  /** Revokes a token; false if no token has that id. Blocking. */
  public synchronized boolean revoke(String id) throws IOException {
    List<TokenRecord> updated = new ArrayList<>(tokens.get());
    if (!updated.removeIf(t -> t.id().equals(id))) {
      return false;
    }
    write(updated);
    tokens.updateAndGet(current -> current.stream().filter(t -> !t.id().equals(id)).toList());
    return true;
  }

  /**
   * The token whose secret this is, if any, with its last-used time updated in memory.
   * Non-blocking; compares with every stored hash so timing does not reveal which, or whether, one
   * matched.
   */
  public Optional<TokenRecord> authenticate(String secret) {
    if (secret == null || !secret.startsWith(SECRET_PREFIX)) {
      return Optional.empty();
    }
    byte[] presented = sha256(secret);
    TokenRecord match = null;
    for (TokenRecord t : tokens.get()) {
      if (MessageDigest.isEqual(t.hash(), presented)) {
        match = t;
      }
    }
    return Optional.ofNullable(match).map(this::touch);
  }

  /** Whether last-used times changed since the file was written. */
  public boolean hasUnsavedUsage() {
    return usageUnsaved;
  }

  /** Writes the current state, including last-used times. Blocking. */
  public synchronized void save() throws IOException {
    usageUnsaved = false;
    write(tokens.get());
  }

  private TokenRecord touch(TokenRecord record) {
    Instant now = clock.instant();
    if (record.lastUsed() != null
        && Duration.between(record.lastUsed(), now).compareTo(LAST_USED_RESOLUTION) < 0) {
      return record;
    }
    TokenRecord used =
        new TokenRecord(record.id(), record.label(), record.created(), now, record.hash());
    // Lock-free: this runs on the event loop and must never wait behind a file write.
    tokens.updateAndGet(
        current -> current.stream().map(t -> t.id().equals(record.id()) ? used : t).toList());
    usageUnsaved = true;
    return used;
  }

  private void write(List<TokenRecord> records) throws IOException {
    JsonArray entries = new JsonArray();
    records.forEach(t -> entries.add(t.toJson().put("sha256", HexFormat.of().formatHex(t.hash()))));
    Files.createDirectories(file.toAbsolutePath().getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    DurableFiles.write(
        tmp,
        new JsonObject().put("tokens", entries).encodePrettily().getBytes(StandardCharsets.UTF_8));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  static byte[] sha256(String secret) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }
}
