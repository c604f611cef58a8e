package ai.spboucher.spbgit.gateway.git;

import java.io.IOException;
import java.io.InputStream;

/** The single-byte read of a stream whose every read must pass its block read (its checks). */
final class ByteReads {

  private ByteReads() {}

  /** One byte of {@code in}, read through {@code in.read(byte[], int, int)}; -1 at the end. */
  static int one(InputStream in) throws IOException {
    byte[] one = new byte[1];
    int n = in.read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }
}
