package ai.spboucher.spbgit.testsupport;

import java.nio.file.Path;

/**
 * A gateway a {@link Stack} brought up, as the stack needs to know it: where it listens, where its
 * data lives, and the owner's token it wrote there. A module's test code returns a richer type (the
 * gateway module's {@code TestGateway}) which tests get back with {@link Stack#gateway(Class)}.
 */
public interface StackGateway extends AutoCloseable {

  /** {@code http://127.0.0.1:port}. */
  String baseUrl();

  Path dataDir();

  /** The token of the owner the gateway created on its first start. */
  String ownerToken();

  @Override
  void close();
}
