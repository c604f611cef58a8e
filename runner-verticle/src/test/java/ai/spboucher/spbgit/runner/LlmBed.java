package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.testsupport.FakeProvider;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The setup the llm-job ITs share, as a JUnit extension on a static field: a {@link JobTestBed}, a
 * scripted {@link FakeProvider}, optionally a runner whose jobs call that provider, and the
 * repositories the tests work on; all started before the class's tests, in a temporary directory of
 * its own, and closed (the directory deleted) after them.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final LlmBed llm =
 *     LlmBed.withKey(KEY).gateway(new JsonObject().put("model", MODEL))
 *         .runner("r1", MODEL, LlmBed.BUDGETED).repo("demo", Map.of("README.md", "hello\n"));
 * }</pre>
 *
 * <p>A runner a test starts with {@link #startRunner} is stopped after that test, so each test can
 * have the one runner it needs; the configured {@link #runner} lives as long as the bed.
 *
 * <p>Threading: configured once on the test class's thread; {@link #bed}, {@link #fake} and {@link
 * #tmp} are set by {@code beforeAll}, before any test reads them.
 */
public final class LlmBed
    implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {

  /**
   * The runner limits most llm ITs run under: the agent's JVM needs 512 MiB; a job over 1,000
   * tokens ends budget_exceeded, at most 10 s after the breach.
   */
  public static final Map<String, String> BUDGETED =
      Map.of(
          "SPB_LIMIT_MEMORY", "512m",
          "SPB_MODEL_TOKEN_BUDGET", "1000",
          "SPB_BREACH_GRACE", "10s");

  private final String key;
  private String wallLimit = "120s";
  private JsonObject gatewayOverrides = new JsonObject();
  private String agentImage;
  private String runnerId;
  private String runnerModel;
  private Map<String, String> runnerEnv = Map.of();
  private final Map<String, Map<String, String>> repos = new LinkedHashMap<>();
  private final List<Vertx> testRunners = new ArrayList<>();
  private volatile boolean inTest;

  /** This class's temporary directory (deleted after its tests); set before the tests run. */
  public Path tmp;

  /** The bed, set before the tests run. */
  public JobTestBed bed;

  /** The provider every runner of this bed calls, set before the tests run. */
  public FakeProvider fake;

  private LlmBed(String key) {
    this.key = key;
  }

  /** A bed whose provider accepts {@code key} only. */
  public static LlmBed withKey(String key) {
    return new LlmBed(key);
  }

  /**
   * The bed most llm ITs want: the Java agent required in {@link JobTestBed#IMAGE}, the gateway's
   * llm jobs on {@code model}, and one runner {@code runnerId} under {@link #BUDGETED}.
   */
  public static LlmBed budgetedAgent(String key, String model, String runnerId) {
    return withKey(key)
        .requireAgent(JobTestBed.IMAGE)
        .gateway(new JsonObject().put("model", model))
        .runner(runnerId, model, BUDGETED);
  }

  /** The jobs' wall limit (default 120 s). */
  public LlmBed wallLimit(String limit) {
    this.wallLimit = limit;
    return this;
  }

  /** Gateway settings on top of the wall limit ({@code model}, {@code models}...). */
  public LlmBed gateway(JsonObject overrides) {
    this.gatewayOverrides = overrides;
    return this;
  }

  /** Requires the Java agent in {@code image} before anything starts (skips or fails as JUnit). */
  public LlmBed requireAgent(String image) {
    this.agentImage = image;
    return this;
  }

  /** A runner {@code id} calling the provider for {@code model}, with {@code env} on top. */
  public LlmBed runner(String id, String model, Map<String, String> env) {
    this.runnerId = id;
    this.runnerModel = model;
    this.runnerEnv = env;
    return this;
  }

  /** A repository on the gateway with these files on main. */
  public LlmBed repo(String name, Map<String, String> files) {
    repos.put(name, files);
    return this;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    if (agentImage != null) {
      JobTestBed.requireLlmAgent(agentImage);
    }
    tmp = Files.createTempDirectory("spb-llm-bed");
    bed = JobTestBed.start(tmp, wallLimit, gatewayOverrides);
    fake = FakeProvider.start(key);
    if (runnerId != null) {
      startRunner(runnerId, runnerModel, runnerEnv);
    }
    for (Map.Entry<String, Map<String, String>> repo : repos.entrySet()) {
      bed.createRepo(repo.getKey(), repo.getValue());
    }
  }

  /**
   * A runner calling the provider for {@code model}, with {@code env} on top; one a test starts
   * (not a {@code @BeforeAll}) is stopped after that test.
   */
  public Vertx startRunner(String id, String model, Map<String, String> env) throws IOException {
    Vertx runner = bed.startRunner(id, fake.runnerEnv(tmp, model, new HashMap<>(env)));
    if (inTest) {
      testRunners.add(runner);
    }
    return runner;
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    inTest = true;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    inTest = false;
    testRunners.forEach(bed::stopRunner);
    testRunners.clear();
  }

  /** The environment {@link #startRunner} gives a runner, for tests that start it themselves. */
  public Map<String, String> runnerEnv(String model, Map<String, String> env) throws IOException {
    return fake.runnerEnv(tmp, model, new HashMap<>(env));
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    List<Exception> failures = new ArrayList<>();
    for (AutoCloseable part : new AutoCloseable[] {bed, fake}) {
      try {
        if (part != null) {
          part.close();
        }
      } catch (Exception e) {
        failures.add(e);
      }
    }
    if (tmp != null) {
      try (Stream<Path> all = Files.walk(tmp)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    if (!failures.isEmpty()) {
      throw failures.get(0);
    }
  }
}
