package ai.spboucher.spbgit.hooks;

import java.util.Optional;
import org.eclipse.jgit.lib.Repository;

/**
 * Git's ref-name rules (git-check-ref-format), checked explicitly so a refusal can say which rule
 * failed, and then once more through JGit so the two can never disagree in the permissive
 * direction.
 */
public final class RefNames {

  private static final int MAX_LENGTH = 1024;

  private RefNames() {}

  /** The first rule {@code name} breaks, or empty when it is a valid full ref name. */
  public static Optional<String> problemWith(String name) {
    if (name == null || name.isEmpty()) {
      return Optional.of("empty ref name");
    }
    if (name.length() > MAX_LENGTH) {
      return Optional.of("ref name longer than " + MAX_LENGTH + " characters");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        return Optional.of("ref name contains a control character");
      }
      if (c == ' ' || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' || c == '['
          || c == '\\') {
        return Optional.of("ref name contains '" + c + "'");
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < name.length()
          && Character.isLowSurrogate(name.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        // JGit would write it as '?', so the ref created would not be the one checked (and git
        // refuses '?').
        return Optional.of("ref name is not valid Unicode");
      }
    }
    if (!name.startsWith("refs/")) {
      return Optional.of("ref name does not start with refs/");
    }
    if (name.contains("..")) {
      return Optional.of("ref name contains '..'");
    }
    if (name.contains("@{")) {
      return Optional.of("ref name contains '@{'");
    }
    if (name.contains("//") || name.endsWith("/")) {
      return Optional.of("ref name has an empty component");
    }
    if (name.endsWith(".") || name.contains("/.")) {
      return Optional.of("ref name has a component starting or ending with '.'");
    }
    for (String component : name.split("/")) {
      if (component.endsWith(".lock")) {
        return Optional.of("ref name has a component ending in .lock");
      }
    }
    if (!Repository.isValidRefName(name)) {
      return Optional.of("invalid ref name");
    }
    return Optional.empty();
  }
}
