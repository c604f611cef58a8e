package ai.spboucher.spbgit.hooks;

import ai.spboucher.spbgit.common.RevocationList;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.eclipse.jgit.lib.Config;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;

/**
 * The stand-alone {@code pre-receive} hook for bare repositories served by stock git. It reads the
 * job token from {@code GIT_AUTH_TOKEN}, verifies it against the gateway's public key and refuses
 * the whole push (git pre-receive hooks are all-or-nothing) if {@link PushGate} refuses any {@code
 * <old> <new> <ref>} line on stdin: outside the token's scope, over the job's ref limits, or not
 * pointing at a commit. It fails closed: a missing key, token or configuration refuses the push.
 *
 * <p>Configuration, git config first, then the environment: {@code spbgit.jobTokenPublicKey} /
 * {@code SPB_JOB_TOKEN_PUBLIC_KEY} (PEM file, required), {@code spbgit.revokedJobTokens} / {@code
 * SPB_REVOKED_JOB_TOKENS} (revocation list, optional), {@code spbgit.repoName} (defaults to the
 * repository directory name without {@code .git}), {@code spbgit.allowPushWithoutJobToken} (default
 * false: pushes without a token are refused).
 */
public final class PreReceiveMain {

  static final int REFUSED = 1;
  static final int MISCONFIGURED = 2;

  private final Map<String, String> env;
  private final PrintStream err;

  PreReceiveMain(Map<String, String> env, PrintStream err) {
    this.env = env;
    this.err = err;
  }

  public static void main(String[] args) throws IOException {
    List<String> lines = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        lines.add(line);
      }
    }
    System.exit(new PreReceiveMain(System.getenv(), System.err).run(new File("."), lines));
  }

  int run(File gitDir, List<String> commandLines) {
    Repository repo;
    try {
      repo = open(gitDir);
    } catch (IOException e) {
      return fail(MISCONFIGURED, "cannot open the repository: " + e.getMessage());
    }
    try (repo) {
      return check(repo, commandLines);
    }
  }

  /**
   * The repository as git sees it during the hook: git keeps the pushed objects in a quarantine
   * directory until the hook has admitted them, and names it (and the real object directory as an
   * alternate) in the environment.
   */
  private Repository open(File gitDir) throws IOException {
    FileRepositoryBuilder builder =
        new FileRepositoryBuilder().setGitDir(gitDir).setMustExist(true);
    String objects = env.get("GIT_OBJECT_DIRECTORY");
    if (objects != null && !objects.isEmpty()) {
      builder.setObjectDirectory(new File(objects));
    }
    String alternates = env.get("GIT_ALTERNATE_OBJECT_DIRECTORIES");
    if (alternates != null) {
      for (String alternate : alternates.split(File.pathSeparator)) {
        // git quotes a path holding the separator; such a path is not found and the push is refused
        // (fail closed).
        if (!alternate.isEmpty()) {
          builder.addAlternateObjectDirectory(new File(alternate));
        }
      }
    }
    return builder.build();
  }

  private int check(Repository repo, List<String> commandLines) {
    Config config = repo.getConfig();
    Path repoDir = repo.getDirectory().toPath().toAbsolutePath().normalize();
    String token = env.get("GIT_AUTH_TOKEN");
    if (token == null || token.isEmpty()) {
      if (config.getBoolean("spbgit", "allowPushWithoutJobToken", false)) {
        return 0;
      }
      return fail(REFUSED, "push refused: no job token in GIT_AUTH_TOKEN");
    }
    String keyPath = setting(config, "jobTokenPublicKey", "SPB_JOB_TOKEN_PUBLIC_KEY");
    if (keyPath == null) {
      return fail(MISCONFIGURED, "push refused: spbgit.jobTokenPublicKey is not configured");
    }
    JobTokenClaims claims;
    try {
      claims =
          verifier(Path.of(keyPath), setting(config, "revokedJobTokens", "SPB_REVOKED_JOB_TOKENS"))
              .verify(token);
    } catch (IOException | GeneralSecurityException e) {
      return fail(
          MISCONFIGURED,
          "push refused: cannot load the job token key or revocation list: " + e.getMessage());
    } catch (InvalidJobTokenException e) {
      return fail(REFUSED, "push refused: " + e.getMessage());
    }
    String repoName = config.getString("spbgit", null, "repoName");
    if (repoName == null) {
      repoName = repoDir.getFileName().toString().replaceFirst("\\.git$", "");
    }
    try {
      return judge(repo, claims, repoName, commandLines);
    } catch (IOException e) {
      return fail(
          MISCONFIGURED,
          "push refused: cannot read the repository to check the push: " + e.getMessage());
    }
  }

  private int judge(
      Repository repo, JobTokenClaims claims, String repoName, List<String> commandLines)
      throws IOException {
    List<PushGate.Update> updates = new ArrayList<>();
    try (ObjectReader reader = repo.newObjectReader()) {
      for (String line : commandLines) {
        String[] fields = line.split(" ", 3);
        if (fields.length != 3 || !ObjectId.isId(fields[1])) {
          return fail(REFUSED, "push refused: malformed pre-receive input line");
        }
        updates.add(
            new PushGate.Update(fields[2], RefTarget.of(reader, ObjectId.fromString(fields[1]))));
      }
    }
    Set<String> existing = new HashSet<>();
    for (Ref ref : repo.getRefDatabase().getRefsByPrefix(claims.refScope().prefix())) {
      existing.add(ref.getName());
    }
    // Stock git applies a pre-receive verdict to the whole push, so one refusal refuses every ref.
    List<PushGate.Verdict> verdicts = PushGate.evaluate(claims, repoName, updates, existing, true);
    boolean refused = false;
    for (PushGate.Verdict verdict : verdicts) {
      if (!verdict.admitted()) {
        refused = true;
        // An atomic refusal quotes another ref's name, so the reason needs escaping as much as the
        // name.
        err.println(
            "refused " + printable(verdict.refName()) + ": " + printable(verdict.refusal().get()));
      }
    }
    return refused ? REFUSED : 0;
  }

  private JobTokenVerifier verifier(Path keyFile, String revocationFile)
      throws IOException, GeneralSecurityException {
    PublicKey key = PublicKeys.read(keyFile);
    Predicate<String> isRevoked = jti -> false;
    if (revocationFile != null) {
      isRevoked = RevocationList.load(Path.of(revocationFile), Clock.systemUTC())::isRevoked;
    }
    return new JobTokenVerifier(Map.of(PublicKeys.keyId(key), key), isRevoked, Clock.systemUTC());
  }

  private String setting(Config config, String name, String envName) {
    String value = config.getString("spbgit", null, name);
    return value != null ? value : env.get(envName);
  }

  private int fail(int code, String message) {
    err.println(message);
    return code;
  }

  /** Control characters in a ref name would let a pusher forge lines in other clients' output. */
  static String printable(String s) {
    StringBuilder out = new StringBuilder(s.length());
    s.codePoints()
        .forEach(
            c -> {
              if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", c));
              } else {
                out.appendCodePoint(c);
              }
            });
    return out.toString();
  }
}
