package ai.spboucher.spbgit.gateway.repos;

/** No repository has that name; maps to 404. */
public final class RepoNotFoundException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public RepoNotFoundException(RepoName name) {
    super("repository not found: " + name);
  }
}
