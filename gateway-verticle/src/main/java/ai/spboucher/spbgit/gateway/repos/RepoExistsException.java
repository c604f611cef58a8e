package ai.spboucher.spbgit.gateway.repos;

/** A repository with that name already exists; maps to 409. */
public final class RepoExistsException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public RepoExistsException(RepoName name) {
    super("repository already exists: " + name);
  }
}
