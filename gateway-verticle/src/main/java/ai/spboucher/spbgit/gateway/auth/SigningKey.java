package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.common.DurableFiles;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import ai.spboucher.spbgit.hooks.PublicKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * The gateway's ES256 (P-256) job-token signing key: {@code keys/job-token-signing.pem} (PKCS#8,
 * mode 0600) and its public half {@code keys/job-token-signing.pub.pem}, which stand-alone hooks
 * are given. Created on first use; loading and creating block.
 */
public record SigningKey(String keyId, PrivateKey privateKey, PublicKey publicKey) {

  static final String PRIVATE_FILE = "job-token-signing.pem";
  static final String PUBLIC_FILE = "job-token-signing.pub.pem";
  static final String RETIRED_DIR = "retired";

  /** Loads the key from {@code keysDir}, generating it if there is none. Blocking. */
  public static SigningKey loadOrCreate(Path keysDir) throws IOException, GeneralSecurityException {
    Path privateFile = keysDir.resolve(PRIVATE_FILE);
    if (!Files.exists(privateFile)) {
      create(keysDir);
    }
    PrivateKey privateKey =
        readPrivateKey(Files.readString(privateFile, StandardCharsets.US_ASCII));
    PublicKey publicKey = PublicKeys.read(publicKeyFile(keysDir));
    return new SigningKey(PublicKeys.keyId(publicKey), privateKey, publicKey);
  }

  public static Path publicKeyFile(Path keysDir) {
    return keysDir.resolve(PUBLIC_FILE);
  }

  /**
   * Replaces the signing key with a new one. The old public key is kept in {@code
   * keys/retired/<kid>.pub.pem} so tokens it signed keep verifying until they expire (at most two
   * hours); retired keys older than that are removed. The running gateway picks the new key up on
   * restart. Blocking.
   */
  public static SigningKey rotate(Path keysDir) throws IOException, GeneralSecurityException {
    Path retired = Files.createDirectories(keysDir.resolve(RETIRED_DIR));
    if (Files.exists(keysDir.resolve(PRIVATE_FILE))) {
      SigningKey old = loadOrCreate(keysDir);
      Files.copy(
          publicKeyFile(keysDir),
          retired.resolve(old.keyId() + ".pub.pem"),
          StandardCopyOption.REPLACE_EXISTING);
      Files.delete(keysDir.resolve(PRIVATE_FILE));
      Files.delete(publicKeyFile(keysDir));
    }
    Instant expired =
        Instant.now().minus(JobTokenVerifier.MAX_LIFETIME).minus(JobTokenVerifier.MAX_CLOCK_SKEW);
    try (DirectoryStream<Path> keys = Files.newDirectoryStream(retired, "*.pub.pem")) {
      for (Path key : keys) {
        if (Files.getLastModifiedTime(key).toInstant().isBefore(expired)) {
          Files.delete(key);
        }
      }
    }
    return loadOrCreate(keysDir);
  }

  /**
   * Every public key a valid token may be signed with: the current one and the retired ones, by
   * kid. Blocking.
   */
  public static Map<String, PublicKey> verificationKeys(Path keysDir)
      throws IOException, GeneralSecurityException {
    Map<String, PublicKey> keys = new HashMap<>();
    Path retired = keysDir.resolve(RETIRED_DIR);
    if (Files.isDirectory(retired)) {
      try (DirectoryStream<Path> files = Files.newDirectoryStream(retired, "*.pub.pem")) {
        for (Path file : files) {
          PublicKey key = PublicKeys.read(file);
          keys.put(PublicKeys.keyId(key), key);
        }
      }
    }
    SigningKey current = loadOrCreate(keysDir);
    keys.put(current.keyId(), current.publicKey());
    return keys;
  }

  private static PrivateKey readPrivateKey(String pem) throws GeneralSecurityException {
    String base64 =
        pem.replace("-----BEGIN PRIVATE KEY-----", "")
            .replace("-----END PRIVATE KEY-----", "")
            .replaceAll("\\s", "");
    return KeyFactory.getInstance("EC")
        .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
  }

  private static void create(Path keysDir) throws IOException, GeneralSecurityException {
    Files.createDirectories(keysDir);
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair pair = generator.generateKeyPair();
    String privatePem =
        "-----BEGIN PRIVATE KEY-----\n"
            + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(pair.getPrivate().getEncoded())
            + "\n-----END PRIVATE KEY-----\n";
    Path tmp = keysDir.resolve(PRIVATE_FILE + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(
        tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    DurableFiles.write(tmp, privatePem.getBytes(StandardCharsets.US_ASCII));
    DurableFiles.write(
        keysDir.resolve(PUBLIC_FILE),
        PublicKeys.toPem(pair.getPublic()).getBytes(StandardCharsets.US_ASCII));
    Files.move(tmp, keysDir.resolve(PRIVATE_FILE), StandardCopyOption.ATOMIC_MOVE);
  }
}
