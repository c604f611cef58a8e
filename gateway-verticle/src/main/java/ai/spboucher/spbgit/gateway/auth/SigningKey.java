package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.hooks.DurableFiles;
import ai.spboucher.spbgit.hooks.PublicKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;

/**
 * The gateway's ES256 (P-256) job-token signing key: {@code keys/job-token-signing.pem} (PKCS#8, mode 0600) and
 * its public half {@code keys/job-token-signing.pub.pem}, which stand-alone hooks are given. Created on first
 * use; loading and creating block.
 */
public record SigningKey(String keyId, String privateKeyPem, PublicKey publicKey) {

  static final String PRIVATE_FILE = "job-token-signing.pem";
  static final String PUBLIC_FILE = "job-token-signing.pub.pem";

  /** Loads the key from {@code keysDir}, generating it if there is none. Blocking. */
  public static SigningKey loadOrCreate(Path keysDir) throws IOException, GeneralSecurityException {
    Path privateFile = keysDir.resolve(PRIVATE_FILE);
    if (!Files.exists(privateFile)) {
      create(keysDir);
    }
    String pem = Files.readString(privateFile, StandardCharsets.US_ASCII);
    PublicKey publicKey = PublicKeys.read(publicKeyFile(keysDir));
    return new SigningKey(PublicKeys.keyId(publicKey), pem, publicKey);
  }

  public static Path publicKeyFile(Path keysDir) {
    return keysDir.resolve(PUBLIC_FILE);
  }

  private static void create(Path keysDir) throws IOException, GeneralSecurityException {
    Files.createDirectories(keysDir);
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair pair = generator.generateKeyPair();
    String privatePem = "-----BEGIN PRIVATE KEY-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(pair.getPrivate()
        .getEncoded()) + "\n-----END PRIVATE KEY-----\n";
    Path tmp = keysDir.resolve(PRIVATE_FILE + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    DurableFiles.write(tmp, privatePem.getBytes(StandardCharsets.US_ASCII));
    DurableFiles.write(keysDir.resolve(PUBLIC_FILE), PublicKeys.toPem(pair.getPublic())
        .getBytes(StandardCharsets.US_ASCII));
    Files.move(tmp, keysDir.resolve(PRIVATE_FILE), StandardCopyOption.ATOMIC_MOVE);
  }

}
