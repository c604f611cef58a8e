package ai.spboucher.spbgit.runner;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;

/**
 * A kept setup cache, opened ({@link JobCache#open}): the tar, for {@link JobCache#extract}, and
 * who produced it. The stream is the caller's to read and close.
 */
record CacheEntry(InputStream tar, CacheProducer producer) implements Closeable {

  @Override
  public void close() throws IOException {
    tar.close();
  }
}
