package ai.spboucher.spbgit.gateway.environment;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * A repository's job environment, as {@code .spbgit/agent.yml} on its default branch describes it:
 * the image (a name from the runners' catalogue), the setup script and the hosts it may reach, the
 * extra hosts the agent phase may reach, the paths under {@code /work} kept between jobs and the
 * files whose contents key them, and the default test command. A repository without the file has
 * {@link #NONE}: the {@code base} image, no setup, no egress, no cache.
 *
 * @param image a name from the runners' image catalogue
 * @param setup a shell script run before the agent, in its own container; empty for none
 * @param setupEgress {@code host:port} the setup phase may reach
 * @param egress {@code host:port} the agent phase may reach besides the gateway and the model
 *     endpoint
 * @param cache absolute paths under {@code /work} to keep between jobs
 * @param cacheKeyFiles repository paths whose contents key the cache
 * @param test the default test command; empty for none
 * @param blob the git blob id of the file it was read from; null for {@link #NONE}
 */
public record AgentEnvironment(
    String image,
    String setup,
    List<String> setupEgress,
    List<String> egress,
    List<String> cache,
    List<String> cacheKeyFiles,
    String test,
    String blob) {

  /** The image of a repository that names none. */
  public static final String DEFAULT_IMAGE = "base";

  /** The environment of a repository without {@code .spbgit/agent.yml}. */
  public static final AgentEnvironment NONE =
      new AgentEnvironment(DEFAULT_IMAGE, "", List.of(), List.of(), List.of(), List.of(), "", null);

  public AgentEnvironment {
    setupEgress = List.copyOf(setupEgress);
    egress = List.copyOf(egress);
    cache = List.copyOf(cache);
    cacheKeyFiles = List.copyOf(cacheKeyFiles);
  }

  /** The environment as the API and the audit show it. */
  public JsonObject toJson() {
    return fields().put("hash", hash());
  }

  /**
   * A SHA-256 over every field (not over the file's bytes, so comments and formatting do not
   * count): two jobs with the same hash ran in the same environment.
   */
  public String hash() {
    JsonObject canonical = fields();
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256")
                  .digest(canonical.encode().getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM must provide SHA-256", e);
    }
  }

  private JsonObject fields() {
    return new JsonObject()
        .put("image", image)
        .put("setup", setup)
        .put("setup_egress", new JsonArray(setupEgress))
        .put("egress", new JsonArray(egress))
        .put("cache", new JsonArray(cache))
        .put("cache_key_files", new JsonArray(cacheKeyFiles))
        .put("test", test);
  }
}
