package ai.spboucher.spbgit.testsupport;

import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * How a {@link Stack} starts the product's parts without this module depending on them: the module
 * that owns a part registers a launcher in its test classes ({@code
 * META-INF/services/ai.spboucher.spbgit.testsupport.StackLaunchers$Gateway}, say), and every test
 * class path that holds those classes (the module's own tests, or its test-jar elsewhere) can stack
 * the part.
 */
public final class StackLaunchers {

  private StackLaunchers() {}

  /** Starts a gateway in this JVM. */
  public interface Gateway {
    /**
     * A gateway with its data in {@code dataDir}, configured by {@code config} (the gateway's JSON
     * settings: {@code natsUrl}, {@code model}, ...), reading the time from {@code clock}; returns
     * once it listens.
     */
    StackGateway start(Path dataDir, JsonObject config, Clock clock) throws Exception;
  }

  /** Starts a runner in this JVM. */
  public interface Runner {
    /**
     * A runner with {@code env} as its whole environment ({@code SPB_*}); returns once it is
     * deployed; closing what it returns stops it.
     */
    AutoCloseable start(Map<String, String> env) throws Exception;
  }

  static <T> T find(Class<T> type, String owner) {
    return ServiceLoader.load(type)
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no "
                        + type.getName()
                        + " on the test class path: add the "
                        + owner
                        + " module's test-jar"));
  }
}
