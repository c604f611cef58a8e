package ai.spboucher.spbgit.builtinagent.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The checkout the tools are confined to. A path from the model is accepted only if it is relative,
 * has no {@code ..} segment, names no {@code .git} or {@code .spb} segment, and its real location
 * (after every symlink) is inside the root and again outside {@code .git/} and {@code .spb/}.
 *
 * <p>This confines the file tools only. {@code run_command} runs a shell in the root and can do
 * anything the sandbox uid can; the container is the boundary (see docs/agents.md).
 */
public final class Workspace {
  private static final Set<String> HIDDEN = Set.of(".git", ".spb");

  private final Path root;

  public Workspace(Path root) throws IOException {
    this.root = root.toRealPath();
  }

  public Path root() {
    return root;
  }

  /** True for the names the tools never show or touch, at any depth. */
  public static boolean hidden(String name) {
    return HIDDEN.contains(name.toLowerCase(Locale.ROOT));
  }

  /** The real location of an existing file or directory. */
  public Path existing(String path) throws PathRefusedException, IOException {
    Path lexical = root.resolve(checked(path));
    Path real;
    try {
      real = lexical.toRealPath();
    } catch (NoSuchFileException e) {
      if (Files.isSymbolicLink(lexical)) {
        throw new PathRefusedException(path + " is a symlink to a missing target");
      }
      throw new NoSuchFileException(path + " does not exist");
    }
    return inside(real, path);
  }

  /**
   * The real location to write {@code path} to; the file may not exist yet. Missing parent
   * directories are all below an existing directory inside the root, so creating them cannot leave
   * it.
   */
  public Path forWrite(String path) throws PathRefusedException, IOException {
    Path lexical = root.resolve(checked(path));
    if (Files.exists(lexical, LinkOption.NOFOLLOW_LINKS)) {
      return existing(path);
    }
    List<String> missing = new ArrayList<>();
    Path ancestor = lexical;
    while (!Files.exists(ancestor, LinkOption.NOFOLLOW_LINKS)) {
      missing.add(0, ancestor.getFileName().toString());
      ancestor = ancestor.getParent();
    }
    Path real;
    try {
      real = ancestor.toRealPath();
    } catch (NoSuchFileException e) {
      throw new PathRefusedException(path + " goes through a symlink to a missing target");
    }
    if (!Files.isDirectory(real)) {
      throw new PathRefusedException(path + ": " + relative(real) + " is not a directory");
    }
    Path target = inside(real, path);
    for (String name : missing) {
      target = target.resolve(name);
    }
    return target;
  }

  /** {@code path} relative to the root, as the model should write it ("." for the root). */
  public String relative(Path real) {
    String relative = root.relativize(real).toString();
    return relative.isEmpty() ? "." : relative;
  }

  private Path inside(Path real, String asked) throws PathRefusedException {
    if (!real.startsWith(root)) {
      throw new PathRefusedException(asked + " resolves outside the repository");
    }
    for (Path segment : root.relativize(real)) {
      if (hidden(segment.toString())) {
        throw new PathRefusedException(
            asked + " resolves into " + segment + "/, which the tools do not touch");
      }
    }
    return real;
  }

  /** The path as a normalised relative path, or a refusal that says why. */
  private static Path checked(String path) throws PathRefusedException {
    if (path == null || path.isBlank()) {
      return Path.of("");
    }
    if (path.indexOf('\0') >= 0) {
      throw new PathRefusedException("path contains a NUL character");
    }
    if (path.startsWith("/") || path.equals("~") || path.startsWith("~/")) {
      throw new PathRefusedException(
          path + " is absolute: use a path relative to the repository root");
    }
    Path relative = Path.of("");
    for (String segment : path.split("/")) {
      if (segment.isEmpty() || segment.equals(".")) {
        continue;
      }
      if (segment.equals("..")) {
        throw new PathRefusedException(
            path + " contains '..': paths must stay inside the repository");
      }
      if (hidden(segment)) {
        throw new PathRefusedException(
            path + " is inside " + segment + "/, which the tools do not touch");
      }
      relative = relative.resolve(segment);
    }
    return relative;
  }
}
