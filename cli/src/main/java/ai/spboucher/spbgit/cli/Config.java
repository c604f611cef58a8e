package ai.spboucher.spbgit.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * Where the gateway is and which owner token to use. {@code SPB_URL} and {@code SPB_TOKEN}
 * override, field by field, the config file {@code $XDG_CONFIG_HOME/spbgit/config.json} (default
 * {@code ~/.config/spbgit/}) that {@code spbgit login} writes.
 *
 * @param url the gateway's base URL without a trailing slash, or null when none is configured
 * @param token the owner's personal access token, or null
 */
public record Config(String url, String token) {

  public static final String URL_VARIABLE = "SPB_URL";
  public static final String TOKEN_VARIABLE = "SPB_TOKEN";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The config file for this environment ({@code XDG_CONFIG_HOME}, else {@code HOME/.config}). */
  public static Path file(Map<String, String> env) {
    String xdg = env.get("XDG_CONFIG_HOME");
    // The XDG spec says a relative value is invalid and must be ignored.
    Path base =
        xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()
            ? Path.of(xdg)
            : Path.of(env.getOrDefault("HOME", System.getProperty("user.home")), ".config");
    return base.resolve("spbgit").resolve("config.json");
  }

  /** The file's settings overridden by the environment's; a missing file is no settings. */
  public static Config resolve(Map<String, String> env, Path file) {
    Config fromFile = read(file);
    String url =
        nonBlank(env.get(URL_VARIABLE)) != null ? env.get(URL_VARIABLE).strip() : fromFile.url();
    String token =
        nonBlank(env.get(TOKEN_VARIABLE)) != null
            ? env.get(TOKEN_VARIABLE).strip()
            : fromFile.token();
    return new Config(url == null ? null : normalizeUrl(url), token);
  }

  /** The URL with a checked {@code http(s)} scheme and host, without a trailing slash. */
  public static String normalizeUrl(String url) {
    String trimmed = url.strip().replaceAll("/+$", "");
    try {
      URI uri = new URI(trimmed);
      if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
          || uri.getHost() == null) {
        throw new CliException(
            ExitCode.USAGE, "the gateway URL must be http(s)://HOST[:PORT], not '" + url + "'");
      }
    } catch (URISyntaxException e) {
      throw new CliException(ExitCode.USAGE, "the gateway URL is not a URL: '" + url + "'");
    }
    return trimmed;
  }

  /** The URL, or a failure telling how to configure one. */
  public String requireUrl() {
    if (url == null) {
      throw new CliException(
          ExitCode.AUTH,
          "no gateway configured: run 'spbgit login' or set "
              + URL_VARIABLE
              + " and "
              + TOKEN_VARIABLE);
    }
    return url;
  }

  /**
   * Writes {@code file} readable by its owner only (0600, directory 0700), replacing it atomically.
   */
  public void write(Path file) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    boolean posix = FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
    if (posix) {
      Files.createDirectories(
          dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } else {
      Files.createDirectories(dir);
    }
    ObjectNode node = JSON.createObjectNode().put("url", url).put("token", token);
    Path tmp = dir.resolve(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    if (posix) {
      // Created 0600 before the secret is written, so it is never readable by others, not even
      // briefly.
      Files.createFile(
          tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    }
    Files.writeString(
        tmp,
        JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n",
        StandardCharsets.UTF_8);
    try {
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static Config read(Path file) {
    if (!Files.isRegularFile(file)) {
      return new Config(null, null);
    }
    try {
      JsonNode node = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
      if (node == null || !node.isObject()) {
        throw new CliException(ExitCode.USAGE, "config file " + file + " is not a JSON object");
      }
      return new Config(
          nonBlank(node.path("url").asText(null)), nonBlank(node.path("token").asText(null)));
    } catch (JsonProcessingException e) {
      throw new CliException(
          ExitCode.USAGE,
          "config file " + file + " is not valid JSON (line " + e.getLocation().getLineNr() + ")");
    } catch (IOException e) {
      throw new CliException(
          ExitCode.USAGE, "cannot read config file " + file + ": " + e.getMessage());
    }
  }

  private static String nonBlank(String value) {
    return value == null || value.isBlank() ? null : value;
  }

  @Override
  public String toString() {
    // Never print the token, not even in a stack trace.
    return "Config[url=" + url + ", token=" + (token == null ? "none" : "***") + "]";
  }
}
