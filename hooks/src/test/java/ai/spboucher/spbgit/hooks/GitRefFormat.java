package ai.spboucher.spbgit.hooks;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * The fuzz tests' oracle for ref names: the ten rules of {@code git check-ref-format} (without
 * {@code --allow-onelevel} or {@code --refspec-pattern}), written component by component from git's
 * manual and independently of {@link RefNames}, plus the meaning of "inside a job's namespace"
 * spelled out on components.
 */
public final class GitRefFormat {

  private GitRefFormat() {}

  /**
   * Whether git accepts {@code name} as a full ref name, judged like git on its UTF-8 bytes: that
   * is how JGit writes it, and an unpaired surrogate becomes {@code ?} there.
   */
  public static boolean accepts(String name) {
    if (name == null) {
      return false;
    }
    return acceptsBytes(
        new String(name.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
  }

  /** The rules on {@code name}'s bytes, one char per byte. */
  private static boolean acceptsBytes(String name) {
    if (name.isEmpty() || name.equals("@")) {
      return false;
    }
    if (name.startsWith("/") || name.endsWith("/") || name.endsWith(".") || !name.contains("/")) {
      return false;
    }
    if (name.contains("..") || name.contains("@{")) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      if (forbidden(name.charAt(i))) {
        return false;
      }
    }
    for (String component : List.of(name.split("/", -1))) {
      if (component.isEmpty() || component.startsWith(".") || component.endsWith(".lock")) {
        return false;
      }
    }
    return true;
  }

  /** Rules 4, 5 and 10: control characters, DEL, space and {@code ~ ^ : ? * [ \}. */
  private static boolean forbidden(char c) {
    return c < 0x20 || c == 0x7f || " ~^:?*[\\".indexOf(c) >= 0;
  }

  /**
   * Whether {@code ref} lies strictly inside {@code refs/agents/<job>/}: a valid ref whose first
   * three components are exactly {@code refs}, {@code agents} and the job, with at least one more
   * component, and which stays inside that directory when taken as the path of a loose ref file.
   */
  public static boolean insideAgentScope(String job, String ref) {
    if (!accepts(ref)) {
      return false;
    }
    String[] components = ref.split("/", -1);
    if (components.length < 4
        || !components[0].equals("refs")
        || !components[1].equals("agents")
        || !components[2].equals(job)) {
      return false;
    }
    Path base = Path.of("refs", "agents", job);
    String bytes = new String(ref.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    Path file = base.resolve(bytes.substring(("refs/agents/" + job + "/").length())).normalize();
    return file.startsWith(base) && !file.equals(base);
  }
}
