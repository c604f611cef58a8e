package ai.spboucher.spbgit.gateway.git;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * Remembers how a request body was read: JGit treats some read failures (a truncated gzip stream,
 * an early end) as "no more commands" and carries on, so after it returns the gateway asks this
 * stream whether the body was really well-formed, and refuses the request when it was not. Used by
 * one worker thread.
 */
final class WatchedInputStream extends FilterInputStream {

  private final long limit;
  private long count;
  private IOException failure;

  /**
   * @param limit bytes the (decompressed) body may have
   */
  WatchedInputStream(InputStream in, long limit) {
    super(in);
    this.limit = limit;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    try {
      int n = super.read(b, off, len);
      if (n > 0 && (count += n) > limit) {
        throw new BodyTooLargeException(limit);
      }
      return n;
    } catch (IOException e) {
      if (failure == null) {
        failure = e;
      }
      throw e;
    }
  }

  @Override
  public int read() throws IOException {
    return ByteReads.one(this);
  }

  /**
   * Throws the first read failure, or a bad request for an empty body; returns if the body read
   * cleanly.
   */
  void requireWellFormed() throws IOException {
    if (failure != null) {
      throw failure;
    }
    if (count == 0) {
      throw new MalformedGitRequestException("empty request body");
    }
  }
}
