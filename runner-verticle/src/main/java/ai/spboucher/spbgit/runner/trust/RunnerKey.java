package ai.spboucher.spbgit.runner.trust;

import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.TokenSeal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * This runner's own P-256 key pair, which job tokens are sealed to: {@code SPB_RUNNER_KEY} (by
 * default {@code <SPB_RUNNER_WORK_DIR>/runner-key.pem}, PKCS#8, mode 0600), created on first start,
 * with its public half beside it as {@code runner-key.pub.pem}: the file the gateway's operator
 * copies into the gateway's runner keys ({@code SPB_RUNNER_KEYS}). Like SSH, the runner refuses a
 * private key others can read.
 *
 * @param keyId the key id the gateway seals this runner's copy of a token under
 * @param privateFile where the private key is
 * @param publicFile where its public half is
 */
public record RunnerKey(String keyId, PrivateKey privateKey, Path privateFile, Path publicFile) {

  private static final Set<PosixFilePermission> OTHERS =
      EnumSet.of(
          PosixFilePermission.GROUP_READ,
          PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE,
          PosixFilePermission.OTHERS_READ,
          PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);

  /**
   * Loads the key at {@code privateFile}, creating the pair if there is none. Blocking.
   *
   * @throws IllegalStateException naming the file and what is wrong with it
   */
  public static RunnerKey loadOrCreate(Path privateFile) {
    Path publicFile = EcKeys.publicFileBeside(privateFile);
    try {
      if (!Files.exists(privateFile)) {
        EcKeys.create(privateFile, publicFile);
      }
      Set<PosixFilePermission> shared = EnumSet.copyOf(Files.getPosixFilePermissions(privateFile));
      shared.retainAll(OTHERS);
      if (!shared.isEmpty()) {
        throw new IllegalStateException(
            "the runner key "
                + privateFile
                + " (SPB_RUNNER_KEY) is accessible to others: chmod 600 it (and make a new one if"
                + " someone may have read it)");
      }
      PrivateKey privateKey = EcKeys.readPrivate(privateFile);
      if (!Files.exists(publicFile)) {
        throw new IllegalStateException(
            "the runner key "
                + privateFile
                + " has no public half "
                + publicFile
                + ": restore it, or delete both to make a new pair (and register that one)");
      }
      PublicKey publicKey = EcKeys.readPublic(publicFile);
      String kid = EcKeys.keyId(publicKey);
      // What the gateway seals to the public half must open with the private one.
      TokenSeal.Sealed probe = TokenSeal.seal("probe", "probe", Map.of(kid, publicKey)).get(0);
      try {
        TokenSeal.open("probe", probe, kid, privateKey);
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException(
            publicFile + " is not the public half of the runner key " + privateFile);
      }
      return new RunnerKey(kid, privateKey, privateFile, publicFile);
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException(
          "cannot use the runner key " + privateFile + " (SPB_RUNNER_KEY): " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    return "RunnerKey[" + keyId + ", " + privateFile + "]";
  }
}
