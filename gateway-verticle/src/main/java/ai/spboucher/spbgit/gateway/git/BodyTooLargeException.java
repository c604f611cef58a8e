package ai.spboucher.spbgit.gateway.git;

import java.io.IOException;

/** A request body went past its configured limit; maps to 413. */
public final class BodyTooLargeException extends IOException {

  private static final long serialVersionUID = 1L;

  BodyTooLargeException(long limit) {
    super("request body exceeds the limit of " + limit + " bytes");
  }
}
