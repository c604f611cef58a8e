package ai.spboucher.spbgit.gateway.repos;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.api.errors.GitAPIException;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.lib.StoredConfig;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;

/**
 * The bare repositories under {@code <data>/repos/<name>.git}. Every method does file I/O and
 * blocks: call it from a worker thread.
 */
public final class RepositoryStore {

  /** A repository as the API lists it. */
  public record RepoInfo(String name, String description) {}

  private static final String DEFAULT_DESCRIPTION_PREFIX = "Unnamed repository";

  private final Path root;

  public RepositoryStore(Path root) throws IOException {
    this.root = Files.createDirectories(root);
  }

  public List<RepoInfo> list() throws IOException {
    List<RepoInfo> repos = new ArrayList<>();
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root, "*.git")) {
      for (Path dir : dirs) {
        String name = dir.getFileName().toString().replaceFirst("\\.git$", "");
        if (Files.isDirectory(dir) && isValidName(name)) {
          repos.add(new RepoInfo(name, readDescription(dir)));
        }
      }
    }
    repos.sort(Comparator.comparing(RepoInfo::name));
    return repos;
  }

  /** Creates an empty bare repository with {@code main} as its default branch. */
  public RepoInfo create(RepoName name, String description) throws IOException {
    Path target = pathOf(name);
    if (Files.exists(target)) {
      throw new RequestException.Conflict("repository already exists: " + name);
    }
    // Build aside and rename into place, so a crash or a concurrent create never leaves a half-made
    // repository.
    Path staging = root.resolve(".staging-" + UUID.randomUUID());
    try (Git git =
        Git.init().setBare(true).setGitDir(staging.toFile()).setInitialBranch("main").call()) {
      StoredConfig config = git.getRepository().getConfig();
      config.setBoolean("receive", null, "fsckObjects", true);
      config.save();
      Files.writeString(
          staging.resolve("description"),
          description == null ? "" : description,
          StandardCharsets.UTF_8);
      Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (FileAlreadyExistsException e) {
      deleteRecursively(staging);
      throw new RequestException.Conflict("repository already exists: " + name);
    } catch (GitAPIException e) {
      deleteRecursively(staging);
      throw new IOException("cannot create repository " + name + ": " + e.getMessage(), e);
    } catch (IOException e) {
      deleteRecursively(staging);
      throw e;
    }
    return new RepoInfo(name.value(), description == null ? "" : description);
  }

  public void delete(RepoName name) throws IOException {
    Path target = pathOf(name);
    if (!Files.isDirectory(target)) {
      throw name.notFound();
    }
    // Rename first so the repository disappears atomically for clients, then remove the files.
    Path doomed = root.resolve(".deleted-" + UUID.randomUUID());
    Files.move(target, doomed, StandardCopyOption.ATOMIC_MOVE);
    deleteRecursively(doomed);
  }

  /** Opens an existing repository; the caller closes it. */
  public Repository open(RepoName name) throws IOException {
    Path dir = pathOf(name);
    if (!Files.isDirectory(dir)) {
      throw name.notFound();
    }
    return new FileRepositoryBuilder().setGitDir(dir.toFile()).setMustExist(true).setBare().build();
  }

  public Path pathOf(RepoName name) {
    return root.resolve(name.value() + ".git");
  }

  private static boolean isValidName(String name) {
    try {
      RepoName.of(name);
      return true;
    } catch (RequestException.Invalid e) {
      return false;
    }
  }

  private static String readDescription(Path dir) throws IOException {
    Path file = dir.resolve("description");
    if (!Files.exists(file)) {
      return "";
    }
    String text = Files.readString(file, StandardCharsets.UTF_8).strip();
    return text.startsWith(DEFAULT_DESCRIPTION_PREFIX) ? "" : text;
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
