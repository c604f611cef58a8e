package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.hooks.JobTokenClaims;

/** Who made a request, once their credential has been verified. */
public sealed interface Principal {

  /** The id recorded in logs and audit entries; never the secret. */
  String tokenId();

  /** The owner, holding a personal access token: every action. */
  record Owner(String tokenId) implements Principal {}

  /**
   * An agent job, holding a job token: push inside its own refs of one repository, nothing else.
   */
  record Job(JobTokenClaims claims) implements Principal {
    @Override
    public String tokenId() {
      return claims.tokenId();
    }
  }
}
