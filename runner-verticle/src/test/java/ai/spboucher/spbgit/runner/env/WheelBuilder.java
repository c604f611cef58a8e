package ai.spboucher.spbgit.runner.env;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Builds a real pure-Python wheel ({@code py3-none-any}) in Java, so a test can give pip a package
 * no public index has without a Python build step: the module files, {@code METADATA}, {@code
 * WHEEL} and a {@code RECORD} whose SHA-256 hashes pip checks on install.
 *
 * <pre>{@code
 * Wheel w = WheelBuilder.distribution("spb-env-probe", "1.0.0")
 *     .module("spb_env_probe", "ANSWER = 42\n")
 *     .build();
 * }</pre>
 *
 * <p>Threading: a builder is not thread-safe; the {@link Wheel} it makes is immutable in use.
 */
public final class WheelBuilder {

  private static final Pattern DISTRIBUTION =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?");
  private static final Pattern VERSION = Pattern.compile("[0-9]+(\\.[0-9]+)*");
  private static final Pattern MODULE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  private final String distribution;
  private final String version;
  private final Map<String, byte[]> files = new LinkedHashMap<>();
  private String summary = "A wheel built by a test";

  private WheelBuilder(String distribution, String version) {
    if (!DISTRIBUTION.matcher(distribution).matches()) {
      throw new IllegalArgumentException("not a distribution name: " + distribution);
    }
    // A plain release number keeps the file name unambiguous; tests need nothing fancier.
    if (!VERSION.matcher(version).matches()) {
      throw new IllegalArgumentException("not a plain release version: " + version);
    }
    this.distribution = distribution;
    this.version = version;
  }

  public static WheelBuilder distribution(String distribution, String version) {
    return new WheelBuilder(distribution, version);
  }

  /** Adds the import package {@code <module>/__init__.py} with the given source. */
  public WheelBuilder module(String module, String initSource) {
    if (!MODULE.matcher(module).matches()) {
      throw new IllegalArgumentException("not a module name: " + module);
    }
    return file(module + "/__init__.py", initSource);
  }

  /** Adds any file at a relative path in purelib (e.g. {@code pkg/data.txt}). */
  public WheelBuilder file(String path, String content) {
    if (path.startsWith("/") || path.contains("..") || path.contains("\\") || path.contains(",")) {
      throw new IllegalArgumentException("not a plain relative path: " + path);
    }
    files.put(path, content.getBytes(StandardCharsets.UTF_8));
    return this;
  }

  public WheelBuilder summary(String summary) {
    this.summary = summary.replaceAll("[\r\n]", " ");
    return this;
  }

  public Wheel build() {
    // PEP 427: in file and directory names the distribution's runs of -_. become one _.
    String escaped = distribution.replaceAll("[-_.]+", "_").toLowerCase(Locale.ROOT);
    String distInfo = escaped + "-" + version + ".dist-info";
    Map<String, byte[]> entries = new LinkedHashMap<>(files);
    entries.put(
        distInfo + "/METADATA",
        Wheel.utf8(
            "Metadata-Version: 2.1\nName: "
                + distribution
                + "\nVersion: "
                + version
                + "\nSummary: "
                + summary
                + "\n"));
    entries.put(
        distInfo + "/WHEEL",
        Wheel.utf8(
            "Wheel-Version: 1.0\nGenerator: spbgit-test-wheelbuilder\nRoot-Is-Purelib: true\nTag: py3-none-any\n"));
    StringBuilder record = new StringBuilder();
    entries.forEach(
        (path, data) ->
            record
                .append(path)
                .append(",sha256=")
                .append(Base64.getUrlEncoder().withoutPadding().encodeToString(Wheel.sha256(data)))
                .append(',')
                .append(data.length)
                .append('\n'));
    String recordPath = distInfo + "/RECORD";
    record.append(recordPath).append(",,\n");
    entries.put(recordPath, Wheel.utf8(record.toString()));
    return new Wheel(
        distribution, version, escaped + "-" + version + "-py3-none-any.whl", zip(entries));
  }

  private static byte[] zip(Map<String, byte[]> entries) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
      for (Map.Entry<String, byte[]> e : entries.entrySet()) {
        ZipEntry entry = new ZipEntry(e.getKey());
        // A fixed time makes equal inputs give byte-equal wheels, so a hash a test pins stays
        // valid.
        entry.setTime(315532800000L + 86_400_000L);
        zip.putNextEntry(entry);
        zip.write(e.getValue());
        zip.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return bytes.toByteArray();
  }
}
