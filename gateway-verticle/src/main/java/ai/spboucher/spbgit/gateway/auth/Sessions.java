package ai.spboucher.spbgit.gateway.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Browser sessions of the owner, opened by signing in with a PAT. Held in memory only (a restart
 * signs everyone out); each carries its own CSRF token. Thread-safe and non-blocking.
 */
public final class Sessions {

  /**
   * A signed-in browser: the PAT it was opened with, and the token its state-changing requests must
   * echo.
   */
  public record Session(String id, String tokenId, String csrf, Instant expires) {}

  static final Duration IDLE = Duration.ofHours(12);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Map<String, Session> sessions = new ConcurrentHashMap<>();
  private final Clock clock;

  public Sessions(Clock clock) {
    this.clock = clock;
  }

  public Session open(String tokenId) {
    Session session = new Session(random(), tokenId, random(), clock.instant().plus(IDLE));
    sessions.put(session.id(), session);
    return session;
  }

  /** The live session with this id, its idle timer restarted; expired ones are removed. */
  public Optional<Session> find(String id) {
    if (id == null) {
      return Optional.empty();
    }
    Session session = sessions.get(id);
    if (session == null) {
      return Optional.empty();
    }
    Instant now = clock.instant();
    if (session.expires().isBefore(now)) {
      sessions.remove(id);
      return Optional.empty();
    }
    Session renewed = new Session(session.id(), session.tokenId(), session.csrf(), now.plus(IDLE));
    sessions.put(id, renewed);
    return Optional.of(renewed);
  }

  public void close(String id) {
    sessions.remove(id);
  }

  /** Ends every session opened with a PAT, when that PAT is revoked. */
  public void closeAllOf(String tokenId) {
    sessions.values().removeIf(s -> s.tokenId().equals(tokenId));
  }

  /** Constant-time comparison of a presented CSRF token with the session's. */
  public static boolean sameToken(String expected, String presented) {
    return presented != null
        && MessageDigest.isEqual(
            expected.getBytes(StandardCharsets.US_ASCII),
            presented.getBytes(StandardCharsets.US_ASCII));
  }

  private static String random() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
