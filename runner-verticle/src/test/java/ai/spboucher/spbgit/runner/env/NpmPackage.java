package ai.spboucher.spbgit.runner.env;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;

/**
 * One version of an npm package, with the tarball {@link NpmRegistry} serves for it: a gzipped
 * ustar archive of {@code package/package.json}, {@code package/index.js} and any other files,
 * built in Java.
 *
 * <pre>{@code
 * NpmPackage p = NpmPackage.named("spb-env-probe", "1.0.0").indexJs("module.exports = { answer: 42 };\n").build();
 * }</pre>
 *
 * <p>Threading: immutable once built; the builder is not thread-safe.
 */
public final class NpmPackage {

  private static final Pattern NAME =
      Pattern.compile("(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*");
  private static final Pattern VERSION = Pattern.compile("[0-9]+\\.[0-9]+\\.[0-9]+");

  /** npm's own fixed tarball time (1985-10-26T08:15:00Z): equal inputs give byte-equal tarballs. */
  private static final long MTIME_SECONDS = 499162500L;

  private final String name;
  private final String version;
  private final JsonObject packageJson;
  private final byte[] tarball;

  private NpmPackage(String name, String version, JsonObject packageJson, byte[] tarball) {
    this.name = name;
    this.version = version;
    this.packageJson = packageJson;
    this.tarball = tarball;
  }

  /** Starts a package; a scoped name ({@code @scope/name}) is allowed. */
  public static Builder named(String name, String version) {
    return new Builder(name, version);
  }

  public String name() {
    return name;
  }

  public String version() {
    return version;
  }

  /** The gzipped tarball. */
  public byte[] tarball() {
    return tarball.clone();
  }

  /** The tarball's file name in the registry: {@code <unscoped-name>-<version>.tgz}. */
  public String tarballFileName() {
    return name.substring(name.indexOf('/') + 1) + "-" + version + ".tgz";
  }

  /** Lower-case hex SHA-1 of the tarball: the packument's {@code dist.shasum}. */
  public String shasum() {
    return HexFormat.of().formatHex(digest("SHA-1"));
  }

  /** {@code sha512-<base64>}: the packument's {@code dist.integrity}, which npm checks. */
  public String integrity() {
    return "sha512-" + Base64.getEncoder().encodeToString(digest("SHA-512"));
  }

  /** The package.json inside the tarball (a copy). */
  public JsonObject packageJson() {
    return packageJson.copy();
  }

  private byte[] digest(String algorithm) {
    try {
      return MessageDigest.getInstance(algorithm).digest(tarball);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has " + algorithm, e);
    }
  }

  /** Collects the files of one package version. */
  public static final class Builder {
    private final String name;
    private final String version;
    private final Map<String, String> files = new LinkedHashMap<>();
    private final JsonObject dependencies = new JsonObject();

    private Builder(String name, String version) {
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("not an npm package name: " + name);
      }
      if (!VERSION.matcher(version).matches()) {
        throw new IllegalArgumentException("not a plain semver version: " + version);
      }
      this.name = name;
      this.version = version;
      files.put("index.js", "module.exports = {};\n");
    }

    /** The package's main file. */
    public Builder indexJs(String source) {
      return file("index.js", source);
    }

    /** Any other file, at a path relative to the package root. */
    public Builder file(String path, String content) {
      if (path.startsWith("/") || path.contains("..") || path.equals("package.json")) {
        throw new IllegalArgumentException("not a plain relative path: " + path);
      }
      files.put(path, content);
      return this;
    }

    /**
     * A dependency, written to package.json (a registry must serve it too for npm install to
     * succeed).
     */
    public Builder dependency(String name, String range) {
      dependencies.put(name, range);
      return this;
    }

    public NpmPackage build() {
      JsonObject packageJson =
          new JsonObject()
              .put("name", name)
              .put("version", version)
              .put("main", "index.js")
              .put("license", "MIT");
      if (!dependencies.isEmpty()) {
        packageJson.put("dependencies", dependencies.copy());
      }
      Map<String, byte[]> entries = new LinkedHashMap<>();
      entries.put(
          "package/package.json", packageJson.encodePrettily().getBytes(StandardCharsets.UTF_8));
      files.forEach(
          (path, content) ->
              entries.put("package/" + path, content.getBytes(StandardCharsets.UTF_8)));
      return new NpmPackage(name, version, packageJson, gzip(ustar(entries)));
    }
  }

  /**
   * A POSIX ustar archive of regular files: 512-byte headers, data padded to 512, two zero blocks
   * at the end.
   */
  static byte[] ustar(Map<String, byte[]> entries) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (Map.Entry<String, byte[]> e : entries.entrySet()) {
      byte[] data = e.getValue();
      out.writeBytes(ustarHeader(e.getKey(), data.length));
      out.writeBytes(data);
      out.writeBytes(new byte[(512 - data.length % 512) % 512]);
    }
    out.writeBytes(new byte[1024]);
    return out.toByteArray();
  }

  private static byte[] ustarHeader(String path, int size) {
    byte[] name = path.getBytes(StandardCharsets.UTF_8);
    // Our paths are short; splitting long ones into prefix/name is not worth it in a test.
    if (name.length > 100) {
      throw new IllegalArgumentException("a ustar name has at most 100 bytes: " + path);
    }
    byte[] h = new byte[512];
    System.arraycopy(name, 0, h, 0, name.length);
    octal(h, 100, 8, 0644);
    octal(h, 108, 8, 0);
    octal(h, 116, 8, 0);
    octal(h, 124, 12, size);
    octal(h, 136, 12, MTIME_SECONDS);
    h[156] = '0';
    ascii(h, 257, "ustar\0");
    ascii(h, 263, "00");
    // The checksum is computed with its own field read as eight spaces.
    ascii(h, 148, "        ");
    long sum = 0;
    for (byte b : h) {
      sum += b & 0xff;
    }
    ascii(h, 148, String.format("%06o", sum) + "\0 ");
    return h;
  }

  /** Zero-padded octal in {@code width - 1} digits and a NUL, as ustar numeric fields are. */
  private static void octal(byte[] h, int offset, int width, long value) {
    String digits = Long.toOctalString(value);
    ascii(h, offset, "0".repeat(width - 1 - digits.length()) + digits + "\0");
  }

  private static void ascii(byte[] h, int offset, String s) {
    byte[] b = s.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(b, 0, h, offset, b.length);
  }

  private static byte[] gzip(byte[] data) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    } catch (IOException e) {
      throw new UncheckedIOException("writing to memory cannot fail", e);
    }
    return out.toByteArray();
  }
}
