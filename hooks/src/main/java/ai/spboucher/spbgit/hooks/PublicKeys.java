package ai.spboucher.spbgit.hooks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

/** PEM encoding and key ids for the gateway's job-token signing keys (EC P-256). */
public final class PublicKeys {

  private static final String BEGIN = "-----BEGIN PUBLIC KEY-----";
  private static final String END = "-----END PUBLIC KEY-----";

  private PublicKeys() {}

  /**
   * The {@code kid} of a key: the first 16 characters of the base64url SHA-256 of its
   * SubjectPublicKeyInfo, so the gateway and a stand-alone hook derive the same id from the same
   * public key file.
   */
  public static String keyId(PublicKey key) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
      return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, 16);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  public static String toPem(PublicKey key) {
    return BEGIN
        + "\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
            .encodeToString(key.getEncoded())
        + "\n"
        + END
        + "\n";
  }

  public static PublicKey fromPem(String pem) throws GeneralSecurityException {
    int start = pem.indexOf(BEGIN);
    int end = pem.indexOf(END);
    if (start < 0 || end < start) {
      throw new GeneralSecurityException("not a PEM public key");
    }
    String body = pem.substring(start + BEGIN.length(), end).replaceAll("\\s", "");
    byte[] der;
    try {
      der = Base64.getDecoder().decode(body);
    } catch (IllegalArgumentException e) {
      throw new GeneralSecurityException("not a PEM public key", e);
    }
    return KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(der));
  }

  /** Reads a PEM public key file. Blocking. */
  public static PublicKey read(Path file) throws IOException, GeneralSecurityException {
    return fromPem(Files.readString(file, StandardCharsets.US_ASCII));
  }
}
