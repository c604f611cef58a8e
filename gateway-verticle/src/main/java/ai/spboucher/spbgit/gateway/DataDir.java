package ai.spboucher.spbgit.gateway;

import ai.spboucher.spbgit.common.DurableFiles;
import ai.spboucher.spbgit.common.RevocationList;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.gateway.auth.TokenStore;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.time.Clock;
import java.util.Map;

/**
 * The gateway's state on disk, opened once at start-up (blocking): {@code repos/}, {@code
 * tokens.json}, {@code keys/} (the job-token key, the job-bus key and, by default, the runners'
 * keys in {@code keys/runners/}), {@code revoked-job-tokens.json}, the audit log {@code
 * agent-jobs.jsonl} and, on first start, {@code initial-owner-token}.
 */
public record DataDir(
    Path root,
    RepositoryStore repos,
    TokenStore pats,
    SigningKey signingKey,
    Map<String, PublicKey> verificationKeys,
    SigningKey jobBusKey,
    RevocationList revocations,
    AuditLog audit) {

  private static final System.Logger LOG = System.getLogger(DataDir.class.getName());
  static final String INITIAL_OWNER_TOKEN = "initial-owner-token";
  static final String KEYS = "keys";

  /**
   * Under {@link #KEYS}: the runners' public keys, unless {@code SPB_RUNNER_KEYS} says elsewhere.
   */
  static final String RUNNER_KEYS = "runners";

  static final String REVOCATIONS = "revoked-job-tokens.json";
  static final String AUDIT_LOG = "agent-jobs.jsonl";

  /** Opens (and on first start, initialises) the data directory. Blocking. */
  public static DataDir open(Path root, Clock clock) throws IOException, GeneralSecurityException {
    Files.createDirectories(root);
    Path tokensFile = root.resolve("tokens.json");
    boolean firstStart = !Files.exists(tokensFile);
    TokenStore pats = TokenStore.load(tokensFile, clock);
    DataDir dir =
        new DataDir(
            root,
            new RepositoryStore(root.resolve("repos")),
            pats,
            SigningKey.loadOrCreate(root.resolve(KEYS)),
            SigningKey.verificationKeys(root.resolve(KEYS)),
            SigningKey.loadOrCreate(SigningKey.KeyFiles.jobBus(root.resolve(KEYS))),
            RevocationList.load(root.resolve(REVOCATIONS), clock),
            AuditLog.open(root.resolve(AUDIT_LOG), clock));
    // Where the operator copies runners' keys; the directory is only looked at again if moved.
    Files.createDirectories(root.resolve(KEYS).resolve(RUNNER_KEYS));
    if (firstStart && pats.isEmpty()) {
      dir.writeInitialOwnerToken();
    }
    return dir;
  }

  public JobTokens jobTokens(Clock clock) {
    return new JobTokens(signingKey, verificationKeys, revocations, clock);
  }

  private void writeInitialOwnerToken() throws IOException {
    TokenStore.CreatedToken token = pats.create("initial owner token");
    Path file = root.resolve(INITIAL_OWNER_TOKEN);
    Files.deleteIfExists(file);
    Files.createFile(
        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    DurableFiles.write(file, (token.secret() + "\n").getBytes(StandardCharsets.UTF_8));
    LOG.log(System.Logger.Level.INFO, "created the owner token; it is in " + file.toAbsolutePath());
  }
}
