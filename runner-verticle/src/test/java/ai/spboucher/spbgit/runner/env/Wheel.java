package ai.spboucher.spbgit.runner.env;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * A built wheel: its file name and bytes, as {@link PackageIndex} serves it.
 *
 * @param distribution the distribution name as given (e.g. {@code spb-env-probe})
 * @param version the version (e.g. {@code 1.0.0})
 * @param fileName the PEP 427 file name, e.g. {@code spb_env_probe-1.0.0-py3-none-any.whl}
 * @param bytes the zip file
 */
public record Wheel(String distribution, String version, String fileName, byte[] bytes) {

  /**
   * PEP 503 normalized name: lower case, runs of {@code -_.} as one {@code -}; the index's path
   * segment.
   */
  public static String normalize(String name) {
    return name.replaceAll("[-_.]+", "-").toLowerCase(Locale.ROOT);
  }

  public String normalizedName() {
    return normalize(distribution);
  }

  /** Lower-case hex SHA-256 of the file, as the index's {@code #sha256=} fragment carries it. */
  public String sha256Hex() {
    return HexFormat.of().formatHex(sha256(bytes));
  }

  static byte[] sha256(byte[] data) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(data);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
