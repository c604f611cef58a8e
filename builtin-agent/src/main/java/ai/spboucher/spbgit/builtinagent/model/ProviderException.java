package ai.spboucher.spbgit.builtinagent.model;

/**
 * The model provider failed; the message is fit for the job log (status and the provider's own
 * text).
 */
public final class ProviderException extends Exception {
  private static final long serialVersionUID = 1L;

  public ProviderException(String message) {
    super(message);
  }
}
