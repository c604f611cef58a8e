package ai.spboucher.spbgit.gateway.environment;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;

/**
 * Reads {@code .spbgit/agent.yml} into an {@link AgentEnvironment}, refusing anything it does not
 * understand with the key and line at fault. The file comes from a repository, so it is read as
 * untrusted input: bounded in size, with YAML aliases and tags refused, and every value checked
 * against what the runner will do with it.
 *
 * <p>Plain Java and stateless; safe on any thread (parsing is CPU only).
 */
public final class EnvironmentFile {

  /** Where the file lives in a repository. */
  public static final String PATH = ".spbgit/agent.yml";

  /**
   * The largest file read; a setup script that needs more belongs in the repository, run from the
   * file.
   */
  public static final int MAX_BYTES = 64 * 1024;

  static final int MAX_HOSTS = 32;
  static final int MAX_PATHS = 16;
  static final int MAX_SETUP = 32 * 1024;
  static final int MAX_TEST = 20_000;

  /**
   * As {@code Subjects} needs it: the name is a NATS subject token and part of a consumer name, so
   * no dot.
   */
  private static final Pattern IMAGE_NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
  private static final Pattern IPV4 =
      Pattern.compile(
          "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final Set<String> KEYS =
      Set.of("image", "setup", "setup_egress", "egress", "cache", "cache_key_files", "test");

  private EnvironmentFile() {}

  /**
   * Parses the file's text.
   *
   * @param blob the file's git blob id, recorded with the environment
   * @throws EnvironmentFileException naming the key and line of the first problem
   */
  public static AgentEnvironment parse(String text, String blob) {
    if (text.length() > MAX_BYTES) {
      throw new EnvironmentFileException(null, 0, "is larger than " + MAX_BYTES / 1024 + " KiB");
    }
    Node root = compose(text).orElse(null);
    if (root == null) {
      return new AgentEnvironment(
          AgentEnvironment.DEFAULT_IMAGE, "", List.of(), List.of(), List.of(), List.of(), "", blob);
    }
    if (!(root instanceof MappingNode mapping)) {
      throw new EnvironmentFileException(
          null, line(root), "must be a mapping of keys (image, setup, ...)");
    }
    Map<String, Node> values = new LinkedHashMap<>();
    for (NodeTuple tuple : mapping.getValue()) {
      String key = scalar(tuple.getKeyNode(), null, "keys must be plain strings");
      if (!KEYS.contains(key)) {
        throw new EnvironmentFileException(
            key,
            line(tuple.getKeyNode()),
            "is not a known key; known: " + String.join(", ", KEYS.stream().sorted().toList()));
      }
      if (values.put(key, tuple.getValueNode()) != null) {
        // Composing does not catch duplicates, and two parsers could disagree on which one wins.
        throw new EnvironmentFileException(key, line(tuple.getKeyNode()), "appears twice");
      }
    }
    String image = optionalScalar(values, "image", AgentEnvironment.DEFAULT_IMAGE);
    if (!IMAGE_NAME.matcher(image).matches()) {
      throw new EnvironmentFileException(
          "image",
          line(values.get("image")),
          "must be a catalogue name: lower-case letters, digits, '_' or '-' (e.g. python)");
    }
    String setup = bounded(values, "setup", MAX_SETUP);
    String test = bounded(values, "test", MAX_TEST);
    return new AgentEnvironment(
        image,
        setup,
        list(values, "setup_egress", MAX_HOSTS, EnvironmentFile::hostPort),
        list(values, "egress", MAX_HOSTS, EnvironmentFile::hostPort),
        list(values, "cache", MAX_PATHS, EnvironmentFile::cachePath),
        list(values, "cache_key_files", MAX_PATHS, EnvironmentFile::repositoryPath),
        test,
        blob);
  }

  private static Optional<Node> compose(String text) {
    LoadSettings settings =
        LoadSettings.builder()
            .setLabel(PATH)
            .setMaxAliasesForCollections(0)
            .setAllowRecursiveKeys(false)
            .setCodePointLimit(MAX_BYTES)
            .build();
    try {
      return new Compose(settings).composeString(text);
    } catch (MarkedYamlEngineException e) {
      int line = e.getProblemMark().map(mark -> mark.getLine() + 1).orElse(0);
      throw new EnvironmentFileException(null, line, "is not valid YAML: " + e.getProblem());
    } catch (YamlEngineException e) {
      throw new EnvironmentFileException(null, 0, "is not valid YAML: " + e.getMessage());
    }
  }

  private static String optionalScalar(Map<String, Node> values, String key, String fallback) {
    Node node = values.get(key);
    return node == null ? fallback : scalar(node, key, "must be a string");
  }

  private static String bounded(Map<String, Node> values, String key, int max) {
    String value = optionalScalar(values, key, "");
    if (value.length() > max) {
      throw new EnvironmentFileException(
          key, line(values.get(key)), "is longer than " + max + " characters");
    }
    if (value.indexOf('\0') >= 0) {
      throw new EnvironmentFileException(key, line(values.get(key)), "contains a NUL character");
    }
    return value;
  }

  /**
   * The items of a list of strings, each checked (and made canonical) by {@code check}; duplicates
   * dropped.
   */
  private static List<String> list(
      Map<String, Node> values, String key, int max, Function<String, String> check) {
    Node node = values.get(key);
    if (node == null) {
      return List.of();
    }
    if (!(node instanceof SequenceNode sequence)) {
      throw new EnvironmentFileException(key, line(node), "must be a list");
    }
    if (sequence.getValue().size() > max) {
      throw new EnvironmentFileException(key, line(node), "has more than " + max + " entries");
    }
    Set<String> items = new LinkedHashSet<>();
    for (Node item : sequence.getValue()) {
      String text = scalar(item, key, "entries must be strings");
      try {
        items.add(check.apply(text));
      } catch (IllegalArgumentException e) {
        throw new EnvironmentFileException(
            key, line(item), "entry '" + printable(text) + "' " + e.getMessage());
      }
    }
    return new ArrayList<>(items);
  }

  private static String scalar(Node node, String key, String problem) {
    if (!(node instanceof ScalarNode scalar)) {
      throw new EnvironmentFileException(key, line(node), problem);
    }
    if (scalar.getTag().getValue().startsWith("!")
        && !scalar.getTag().getValue().startsWith("!!")) {
      throw new EnvironmentFileException(key, line(node), "must not carry a YAML tag");
    }
    return scalar.getValue();
  }

  /**
   * A {@code host:port} the egress proxy can match: a lower-case DNS name or an IPv4 literal, and a
   * port.
   */
  static String hostPort(String text) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("must be host:port (e.g. registry.example.org:443)");
    }
    String host = text.substring(0, colon).toLowerCase(Locale.ROOT);
    String port = text.substring(colon + 1);
    if (!port.matches("[0-9]{1,5}")
        || Integer.parseInt(port) < 1
        || Integer.parseInt(port) > 65535) {
      throw new IllegalArgumentException("has no port between 1 and 65535");
    }
    if (!IPV4.matcher(host).matches() && !isDnsName(host)) {
      throw new IllegalArgumentException(
          "has a host that is neither a DNS name nor an IPv4 address");
    }
    return host + ":" + Integer.parseInt(port);
  }

  private static boolean isDnsName(String host) {
    if (host.length() > 253) {
      return false;
    }
    for (String label : host.split("\\.", -1)) {
      if (!DNS_LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }

  /** An absolute path strictly under {@code /work}, in normal form. */
  static String cachePath(String text) {
    Path path = normal(text);
    if (!path.isAbsolute()
        || !path.startsWith("/work")
        || path.getNameCount() < 2
        || !path.toString().equals(text)) {
      throw new IllegalArgumentException(
          "must be an absolute path under /work in normal form (e.g. /work/.venv)");
    }
    return text;
  }

  /** A relative path inside the repository, in normal form. */
  static String repositoryPath(String text) {
    Path path = normal(text);
    if (path.isAbsolute()
        || path.getNameCount() == 0
        || path.startsWith("..")
        || !path.toString().equals(text)
        || text.isEmpty()) {
      throw new IllegalArgumentException(
          "must be a path inside the repository in normal form (e.g. requirements.txt)");
    }
    return text;
  }

  private static Path normal(String text) {
    if (text.indexOf('\0') >= 0 || text.indexOf('\\') >= 0) {
      throw new IllegalArgumentException("contains a NUL or backslash");
    }
    try {
      return Path.of(text).normalize();
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException("is not a path");
    }
  }

  private static int line(Node node) {
    return node == null ? 0 : node.getStartMark().map(Mark::getLine).map(l -> l + 1).orElse(0);
  }

  private static String printable(String text) {
    String shown = text.length() > 80 ? text.substring(0, 80) + "..." : text;
    return shown.replaceAll("\\p{Cntrl}", "?");
  }
}
