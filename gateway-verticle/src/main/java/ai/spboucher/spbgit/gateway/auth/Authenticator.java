package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.hooks.InvalidJobTokenException;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import io.vertx.core.http.HttpServerRequest;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

/**
 * Turns the {@code Authorization} header into a {@link Principal}: {@code Bearer <token>} for the
 * API, {@code Basic} (user name ignored, password = token) for git clients. CPU-only, safe on the
 * event loop.
 */
public record Authenticator(TokenStore pats, JobTokens jobTokens) {

  /** The credential in the request, if it carries one. */
  public static Optional<String> credentialOf(HttpServerRequest request) {
    String header = request.getHeader("Authorization");
    if (header == null) {
      return Optional.empty();
    }
    int space = header.indexOf(' ');
    if (space < 0) {
      throw new RequestException.Unauthenticated("malformed Authorization header");
    }
    String scheme = header.substring(0, space);
    String value = header.substring(space + 1).trim();
    if (scheme.equalsIgnoreCase("Bearer")) {
      return Optional.of(value);
    }
    if (scheme.equalsIgnoreCase("Basic")) {
      String decoded;
      try {
        decoded = new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        throw new RequestException.Unauthenticated("malformed Basic credentials");
      }
      int colon = decoded.indexOf(':');
      return Optional.of(colon < 0 ? decoded : decoded.substring(colon + 1));
    }
    throw new RequestException.Unauthenticated("unsupported authorization scheme " + scheme);
  }

  /**
   * The verified principal for {@code credential}, or an {@link RequestException.Unauthenticated}
   * saying why not.
   */
  public Principal authenticate(String credential) {
    if (JobTokenVerifier.looksLikeJwt(credential)) {
      try {
        return new Principal.Job(jobTokens.verify(credential));
      } catch (InvalidJobTokenException e) {
        throw new RequestException.Unauthenticated(e.getMessage());
      }
    }
    return pats.authenticate(credential)
        .<Principal>map(t -> new Principal.Owner(t.id()))
        .orElseThrow(() -> new RequestException.Unauthenticated("invalid or revoked token"));
  }

  /**
   * Whether {@code principal}'s credential was revoked since it was verified, for work that
   * outlives the check (a long push). Job tokens only: a personal access token revoked during a
   * push is noticed at its next use.
   */
  public boolean isRevoked(Principal principal) {
    return principal instanceof Principal.Job job && jobTokens.isRevoked(job.tokenId());
  }

  /** The principal of the request, or empty when it carries no credential. */
  public Optional<Principal> authenticate(HttpServerRequest request) {
    return credentialOf(request).map(this::authenticate);
  }
}
