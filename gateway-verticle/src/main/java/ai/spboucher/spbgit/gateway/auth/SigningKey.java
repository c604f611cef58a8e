package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * One of the gateway's ES256 (P-256) signing keys: a private file (PKCS#8, mode 0600), its public
 * half, and the public halves of the keys it replaced ({@link KeyFiles}). Two keys are kept this
 * way: the job-token key ({@link KeyFiles#jobToken}), whose public half stand-alone hooks are
 * given, and the job-bus key ({@link KeyFiles#jobBus}) that signs what the gateway sends runners,
 * whose public halves runners are given. Created on first use; loading, creating and rotating
 * block.
 */
public record SigningKey(String keyId, PrivateKey privateKey, PublicKey publicKey) {

  static final String PRIVATE_FILE = "job-token-signing.pem";
  static final String PUBLIC_FILE = "job-token-signing.pub.pem";
  static final String RETIRED_DIR = "retired";

  /** The directory under {@code keys/} holding only the job-bus key's public halves. */
  public static final String JOB_BUS_DIR = "job-bus";

  /**
   * Where one signing key's files are.
   *
   * @param privateFile the private key
   * @param publicFile its public half
   * @param retiredDir where the public halves of the keys it replaced go, as {@code <kid>.pub.pem}
   */
  public record KeyFiles(Path privateFile, Path publicFile, Path retiredDir) {

    /**
     * {@code keys/job-token-signing.pem}, {@code keys/job-token-signing.pub.pem}, {@code
     * keys/retired/}.
     */
    public static KeyFiles jobToken(Path keysDir) {
      return new KeyFiles(
          keysDir.resolve(PRIVATE_FILE),
          keysDir.resolve(PUBLIC_FILE),
          keysDir.resolve(RETIRED_DIR));
    }

    /**
     * {@code keys/job-bus-signing.pem}, and its public halves, current ({@code
     * keys/job-bus/job-bus-signing.pub.pem}) and retired, side by side in {@code keys/job-bus/}:
     * the directory runners are given ({@code SPB_GATEWAY_KEYS}), which holds no private key.
     */
    public static KeyFiles jobBus(Path keysDir) {
      Path dir = keysDir.resolve(JOB_BUS_DIR);
      return new KeyFiles(
          keysDir.resolve("job-bus-signing.pem"), dir.resolve("job-bus-signing.pub.pem"), dir);
    }
  }

  /** Loads the job-token key from {@code keysDir}, generating it if there is none. Blocking. */
  public static SigningKey loadOrCreate(Path keysDir) throws IOException, GeneralSecurityException {
    return loadOrCreate(KeyFiles.jobToken(keysDir));
  }

  /** Loads the key, generating it if there is none. Blocking. */
  public static SigningKey loadOrCreate(KeyFiles files)
      throws IOException, GeneralSecurityException {
    if (!Files.exists(files.privateFile())) {
      EcKeys.create(files.privateFile(), files.publicFile());
    }
    PrivateKey privateKey = EcKeys.readPrivate(files.privateFile());
    PublicKey publicKey = EcKeys.readPublic(files.publicFile());
    return new SigningKey(EcKeys.keyId(publicKey), privateKey, publicKey);
  }

  /** The job-token key's public half, as stand-alone hooks are given it. */
  public static Path publicKeyFile(Path keysDir) {
    return KeyFiles.jobToken(keysDir).publicFile();
  }

  /** {@link #rotate(KeyFiles)} of the job-token key. */
  public static SigningKey rotate(Path keysDir) throws IOException, GeneralSecurityException {
    return rotate(KeyFiles.jobToken(keysDir));
  }

  /**
   * Replaces the key with a new one. The old public key is kept in the retired directory as {@code
   * <kid>.pub.pem}, so what it signed keeps verifying as long as it may be used (job tokens live at
   * most two hours, job requests are refused after as long); retired keys older than that are
   * removed. The running gateway picks the new key up on restart. Blocking.
   */
  public static SigningKey rotate(KeyFiles files) throws IOException, GeneralSecurityException {
    Path retired = Files.createDirectories(files.retiredDir());
    if (Files.exists(files.privateFile())) {
      SigningKey old = loadOrCreate(files);
      Files.copy(
          files.publicFile(),
          retired.resolve(old.keyId() + ".pub.pem"),
          StandardCopyOption.REPLACE_EXISTING);
      Files.delete(files.privateFile());
      Files.delete(files.publicFile());
    }
    Instant expired =
        Instant.now().minus(JobTokenVerifier.MAX_LIFETIME).minus(JobTokenVerifier.MAX_CLOCK_SKEW);
    try (DirectoryStream<Path> keys = Files.newDirectoryStream(retired, "*.pub.pem")) {
      for (Path key : keys) {
        if (!key.equals(files.publicFile())
            && Files.getLastModifiedTime(key).toInstant().isBefore(expired)) {
          Files.delete(key);
        }
      }
    }
    return loadOrCreate(files);
  }

  /**
   * Every public key a valid job token may be signed with: the current one and the retired ones, by
   * kid. Blocking.
   */
  public static Map<String, PublicKey> verificationKeys(Path keysDir)
      throws IOException, GeneralSecurityException {
    KeyFiles files = KeyFiles.jobToken(keysDir);
    Map<String, PublicKey> keys = new HashMap<>();
    if (Files.isDirectory(files.retiredDir())) {
      try (DirectoryStream<Path> retired =
          Files.newDirectoryStream(files.retiredDir(), "*.pub.pem")) {
        for (Path file : retired) {
          PublicKey key = EcKeys.readPublic(file);
          keys.put(EcKeys.keyId(key), key);
        }
      }
    }
    SigningKey current = loadOrCreate(files);
    keys.put(current.keyId(), current.publicKey());
    return keys;
  }
}
