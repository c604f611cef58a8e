package ai.spboucher.spbgit.runner.env;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The test package servers work with the real clients: host pip installs a {@link WheelBuilder}
 * wheel from a {@link PackageIndex}, host npm a {@link NpmPackage} from an {@link NpmRegistry},
 * both served on this machine's own non-loopback address; and both clients, told of a proxy, send
 * every request for these http:// URLs through it as absolute-URI requests. Nothing comes from PyPI
 * or the public npm registry: the clients run with every inherited proxy, pip and npm setting
 * removed, and the servers' logs prove what was fetched from them.
 */
class PackageRegistriesIT {

  @TempDir static Path shared;
  static InetAddress address;
  static Path python;

  @BeforeAll
  static void createVirtualEnvironment() throws Exception {
    address = OwnAddress.nonLoopbackIpv4();
    Path venv = shared.resolve("venv");
    // ensurepip installs the bundled pip from the standard library: no index is contacted.
    Result made = run(shared, Map.of(), "python3", "-m", "venv", venv.toString());
    assertEquals(0, made.exit(), made.report());
    python = venv.resolve("bin/python");
  }

  @Test
  void pipInstallsABuiltWheelFromTheLocalIndex(@TempDir Path dir) throws Exception {
    Wheel wanted =
        WheelBuilder.distribution("spb-env.Probe", "1.0.0")
            .module("spb_env_probe", "ANSWER = 42\n")
            .build();
    Wheel older =
        WheelBuilder.distribution("spb-env.Probe", "0.9.0")
            .module("spb_env_probe", "ANSWER = 9\n")
            .build();
    try (PackageIndex index = PackageIndex.serve(address, wanted, older)) {
      Result pip = pipInstall(dir, index, Map.of(), List.of(), "spb-env.Probe==1.0.0");
      assertEquals(0, pip.exit(), pip.report());

      assertEquals("42", pythonPrints(dir, "import spb_env_probe; print(spb_env_probe.ANSWER)"));
      assertEquals(1, index.downloadsOf(wanted).size(), index.requests().toString());
      assertEquals(address, index.downloadsOf(wanted).get(0).client());
      assertTrue(index.downloadsOf(older).isEmpty(), index.requests().toString());
      assertTrue(
          index.requests().stream().anyMatch(r -> r.path().equals("/simple/spb-env-probe/")),
          index.requests().toString());
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"HTTP_PROXY", "http_proxy", "--proxy"})
  void pipSendsAbsoluteUriRequestsThroughTheProxyItIsGiven(String how, @TempDir Path dir)
      throws Exception {
    // One name per variant: all share one virtual environment, where an installed name would not be
    // fetched again.
    String distribution =
        "spb-proxied-"
            + Map.of("HTTP_PROXY", "upper", "http_proxy", "lower", "--proxy", "flag").get(how);
    Wheel wheel =
        WheelBuilder.distribution(distribution, "1.0.0")
            .module(distribution.replace('-', '_'), "VIA = 'proxy'\n")
            .build();
    try (PackageIndex index = PackageIndex.serve(address, wheel);
        RecordingForwardProxy proxy = new RecordingForwardProxy(InetAddress.getLoopbackAddress())) {
      Map<String, String> env = how.startsWith("--") ? Map.of() : Map.of(how, proxy.url());
      List<String> flags = how.startsWith("--") ? List.of(how, proxy.url()) : List.of();
      Result pip = pipInstall(dir, index, env, flags, distribution + "==1.0.0");
      assertEquals(0, pip.exit(), pip.report());

      assertEquals(
          "proxy",
          pythonPrints(dir, "import " + distribution.replace('-', '_') + " as m; print(m.VIA)"));
      String origin = "http://" + address.getHostAddress() + ":" + index.port();
      List<String> seen = lines(proxy);
      assertTrue(seen.contains("GET " + origin + "/simple/" + distribution + "/"), seen.toString());
      assertTrue(seen.contains("GET " + origin + "/packages/" + wheel.fileName()), seen.toString());
      assertNoConnectAndEveryRequestProxied(seen, index.requests().size());
      System.out.printf("pip via %s sent to the proxy: %s%n", how, seen);
    }
  }

  @Test
  void npmInstallsPlainAndScopedPackagesFromTheLocalRegistry(@TempDir Path dir) throws Exception {
    NpmPackage plain =
        NpmPackage.named("spb-env-probe", "1.0.0")
            .indexJs("module.exports = { answer: 40 };\n")
            .build();
    NpmPackage newer =
        NpmPackage.named("spb-env-probe", "1.1.0")
            .indexJs("module.exports = { answer: -1 };\n")
            .build();
    NpmPackage scoped =
        NpmPackage.named("@spb/scoped-probe", "2.0.0")
            .indexJs("module.exports = { answer: 2 };\n")
            .build();
    try (NpmRegistry registry = NpmRegistry.serve(address, plain, newer, scoped)) {
      Result npm =
          npmInstall(
              dir, registry, Map.of(), List.of(), "spb-env-probe@1.0.0", "@spb/scoped-probe@2.0.0");
      assertEquals(0, npm.exit(), npm.report());

      assertEquals(
          "42",
          nodePrints(dir, "require('spb-env-probe').answer + require('@spb/scoped-probe').answer"));
      assertEquals(1, registry.downloadsOf(plain).size(), registry.requests().toString());
      assertEquals(1, registry.downloadsOf(scoped).size(), registry.requests().toString());
      assertEquals(address, registry.downloadsOf(plain).get(0).client());
      assertTrue(registry.downloadsOf(newer).isEmpty(), registry.requests().toString());
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"--proxy", "npm_config_proxy", "HTTP_PROXY", "http_proxy"})
  void npmSendsAbsoluteUriRequestsThroughTheProxyItIsGiven(String how, @TempDir Path dir)
      throws Exception {
    NpmPackage p =
        NpmPackage.named("@spb/proxied-probe", "1.0.0")
            .indexJs("module.exports = { via: 'proxy' };\n")
            .build();
    try (NpmRegistry registry = NpmRegistry.serve(address, p);
        RecordingForwardProxy proxy = new RecordingForwardProxy(InetAddress.getLoopbackAddress())) {
      Map<String, String> env = how.startsWith("--") ? Map.of() : Map.of(how, proxy.url());
      List<String> flags = how.startsWith("--") ? List.of(how, proxy.url()) : List.of();
      Result npm = npmInstall(dir, registry, env, flags, "@spb/proxied-probe@1.0.0");
      assertEquals(0, npm.exit(), npm.report());

      assertEquals("proxy", nodePrints(dir, "require('@spb/proxied-probe').via"));
      String origin = "http://" + address.getHostAddress() + ":" + registry.port();
      List<String> seen = lines(proxy);
      assertTrue(seen.contains("GET " + origin + "/@spb%2fproxied-probe"), seen.toString());
      assertTrue(
          seen.contains("GET " + origin + "/@spb/proxied-probe/-/proxied-probe-1.0.0.tgz"),
          seen.toString());
      assertNoConnectAndEveryRequestProxied(seen, registry.requests().size());
      System.out.printf("npm via %s sent to the proxy: %s%n", how, seen);
    }
  }

  private static void assertNoConnectAndEveryRequestProxied(List<String> seen, int servedByOrigin) {
    assertFalse(seen.stream().anyMatch(s -> s.startsWith("CONNECT")), seen.toString());
    assertEquals(
        servedByOrigin,
        seen.size(),
        "every request the origin served came through the proxy: " + seen);
  }

  private static List<String> lines(RecordingForwardProxy proxy) {
    return proxy.requests().stream().map(r -> r.method() + " " + r.target()).toList();
  }

  private static Result pipInstall(
      Path dir, PackageIndex index, Map<String, String> env, List<String> flags, String requirement)
      throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                python.toString(),
                "-m",
                "pip",
                "install",
                "--no-cache-dir",
                "--no-input",
                "--disable-pip-version-check",
                "--index-url",
                index.simpleUrl(),
                "--trusted-host",
                index.trustedHost()));
    command.addAll(flags);
    command.add(requirement);
    return run(dir, env, command.toArray(String[]::new));
  }

  private static String pythonPrints(Path dir, String code) throws Exception {
    Result r = run(dir, Map.of(), python.toString(), "-c", code);
    assertEquals(0, r.exit(), r.report());
    return r.output().strip();
  }

  private static Result npmInstall(
      Path dir, NpmRegistry registry, Map<String, String> env, List<String> flags, String... specs)
      throws Exception {
    Path home = Files.createDirectories(dir.resolve("home"));
    // Two files: npm refuses to load one file as both user and global configuration.
    Path userConfig = Files.writeString(home.resolve("user-npmrc"), "");
    Path globalConfig = Files.writeString(home.resolve("global-npmrc"), "");
    Path project = Files.createDirectories(dir.resolve("project"));
    List<String> command =
        new ArrayList<>(
            List.of(
                "npm",
                "install",
                "--registry",
                registry.url(),
                "--cache",
                home.resolve("npm-cache").toString(),
                "--userconfig",
                userConfig.toString(),
                "--globalconfig",
                globalConfig.toString(),
                "--no-audit",
                "--no-fund",
                "--no-update-notifier"));
    command.addAll(flags);
    command.addAll(List.of(specs));
    Map<String, String> withHome = new HashMap<>(env);
    withHome.put("HOME", home.toString());
    return run(project, withHome, command.toArray(String[]::new));
  }

  private static String nodePrints(Path dir, String expression) throws Exception {
    Result r =
        run(dir.resolve("project"), Map.of(), "node", "-e", "console.log(" + expression + ")");
    assertEquals(0, r.exit(), r.report());
    return r.output().strip();
  }

  /** A finished client: its exit code, its output, and what was run, for failure messages. */
  record Result(int exit, String output, String command) {
    String report() {
      return command + "\n" + output;
    }
  }

  /**
   * Runs a client with this machine's proxy, pip and npm settings removed from its environment, so
   * only what the test passes decides where it fetches from; pip reads no configuration file at
   * all.
   */
  static Result run(Path dir, Map<String, String> env, String... command)
      throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    Map<String, String> environment = builder.environment();
    environment
        .keySet()
        .removeIf(
            k -> {
              String key = k.toLowerCase(Locale.ROOT);
              return key.contains("proxy")
                  || key.startsWith("pip_")
                  || key.startsWith("npm_config_")
                  || key.equals("pythonpath");
            });
    environment.put("PIP_CONFIG_FILE", "/dev/null");
    environment.putAll(env);
    // Output to a file, so a client that hangs is cut off by the timeout instead of blocking a pipe
    // read.
    Path log = Files.createTempFile(dir, "client-", ".log");
    Process process = builder.redirectOutput(log.toFile()).start();
    process.getOutputStream().close();
    if (!process.waitFor(180, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException(
          "timed out: " + String.join(" ", command) + "\n" + Files.readString(log));
    }
    return new Result(
        process.exitValue(),
        Files.readString(log),
        String.join(" ", command) + " (in " + dir + ", with " + env + ")");
  }
}
