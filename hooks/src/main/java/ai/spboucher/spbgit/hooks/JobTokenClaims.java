package ai.spboucher.spbgit.hooks;

import java.time.Instant;
import java.util.List;

/**
 * The verified claims of a job token. Only {@link JobTokenVerifier} creates instances from a JWT,
 * so holding one means the signature, algorithm, issuer, audience, lifetime and revocation checks
 * have all passed.
 *
 * @param jobId the {@code sub} claim: the job the token was issued for
 * @param tokenId the {@code jti} claim: what revocation refers to
 * @param repo {@code scope.repo}: the one repository the token may push to
 * @param refScope {@code scope.refs}: always {@code refs/agents/<jobId>/*}
 * @param capabilities {@code cap}: always contains {@link #PUSH_AGENT_REF}
 */
public record JobTokenClaims(
    String jobId,
    String tokenId,
    String repo,
    RefScope refScope,
    List<String> capabilities,
    Instant issuedAt,
    Instant notBefore,
    Instant expiresAt) {

  /** The only capability a job token carries: push inside its own ref namespace. */
  public static final String PUSH_AGENT_REF = "push:agent-ref";

  public JobTokenClaims {
    capabilities = List.copyOf(capabilities);
  }
}
