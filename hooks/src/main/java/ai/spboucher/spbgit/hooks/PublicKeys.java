package ai.spboucher.spbgit.hooks;

import ai.spboucher.spbgit.common.EcKeys;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PublicKey;

/**
 * PEM encoding and key ids for the gateway's job-token signing keys (EC P-256): the hook's names
 * for {@link EcKeys}, which every key of the project shares.
 */
public final class PublicKeys {

  private PublicKeys() {}

  /**
   * The {@code kid} of a key: the first 16 characters of the base64url SHA-256 of its
   * SubjectPublicKeyInfo, so the gateway and a stand-alone hook derive the same id from the same
   * public key file.
   */
  public static String keyId(PublicKey key) {
    return EcKeys.keyId(key);
  }

  public static String toPem(PublicKey key) {
    return EcKeys.publicPem(key);
  }

  public static PublicKey fromPem(String pem) throws GeneralSecurityException {
    return EcKeys.publicFromPem(pem);
  }

  /** Reads a PEM public key file. Blocking. */
  public static PublicKey read(Path file) throws IOException, GeneralSecurityException {
    return EcKeys.readPublic(file);
  }
}
