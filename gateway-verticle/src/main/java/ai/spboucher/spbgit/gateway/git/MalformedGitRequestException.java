package ai.spboucher.spbgit.gateway.git;

/**
 * A git request the gateway cannot serve as sent: no smart service named, an empty body, a body
 * that goes on after the push, an unsupported encoding. Answered 400, or the closer 4xx the route
 * chose (415).
 */
public final class MalformedGitRequestException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  MalformedGitRequestException(String message) {
    super(message);
  }
}
