package ai.spboucher.spbgit.common;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Seals a job's token to runners' P-256 keys, so that the job request carries it readable by those
 * runners only: ECDH-ES with one fresh ephemeral key per job, HKDF-SHA256 over the shared secret
 * with the job id and the recipient's key id in its info (a copy opens for that job and that key
 * only), and AES-256-GCM with the same info as associated data. All from the JDK.
 *
 * <p>Thread-safe; CPU only: one ECDH and one AES-GCM per recipient, well under a millisecond each.
 */
public final class TokenSeal {

  /**
   * One recipient's copy.
   *
   * @param recipientKid the {@link EcKeys#keyId} of the runner key it is sealed to
   * @param ephemeralKey the job's ephemeral P-256 public key (SubjectPublicKeyInfo, DER)
   * @param nonce the 12-byte AES-GCM nonce
   * @param ciphertext the token encrypted, with the 16-byte GCM tag at its end
   */
  public record Sealed(String recipientKid, byte[] ephemeralKey, byte[] nonce, byte[] ciphertext) {}

  private static final String LABEL = "spbgit sealed job token v1";
  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  private TokenSeal() {}

  /** Seals {@code token} of job {@code jobId} to each of {@code recipients} (keys by id). */
  public static List<Sealed> seal(String jobId, String token, Map<String, PublicKey> recipients) {
    KeyPair ephemeral = EcKeys.generate();
    byte[] ephemeralKey = ephemeral.getPublic().getEncoded();
    List<Sealed> copies = new ArrayList<>();
    try {
      for (Map.Entry<String, PublicKey> recipient : recipients.entrySet()) {
        byte[] info = info(jobId, recipient.getKey());
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        byte[] key = contentKey(ephemeral.getPrivate(), recipient.getValue(), info);
        byte[] ciphertext = aes(Cipher.ENCRYPT_MODE, key, nonce, info).doFinal(utf8(token));
        copies.add(new Sealed(recipient.getKey(), ephemeralKey, nonce, ciphertext));
      }
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot seal a job token: " + e.getMessage(), e);
    }
    return copies;
  }

  /**
   * Opens the copy of job {@code jobId}'s token sealed to {@code ownKid}.
   *
   * @throws GeneralSecurityException when the copy is for another key or job, or was altered
   */
  public static String open(String jobId, Sealed sealed, String ownKid, PrivateKey own)
      throws GeneralSecurityException {
    if (!ownKid.equals(sealed.recipientKid())) {
      throw new GeneralSecurityException("sealed to another key");
    }
    if (sealed.nonce().length != NONCE_BYTES) {
      throw new GeneralSecurityException("sealed token has a bad nonce");
    }
    PublicKey ephemeral = EcKeys.publicFromDer(sealed.ephemeralKey());
    byte[] info = info(jobId, ownKid);
    byte[] key = contentKey(own, ephemeral, info);
    return new String(
        aes(Cipher.DECRYPT_MODE, key, sealed.nonce(), info).doFinal(sealed.ciphertext()),
        StandardCharsets.UTF_8);
  }

  /** HKDF over the ECDH secret of {@code mine} and {@code theirs}: an AES-256 key. */
  private static byte[] contentKey(PrivateKey mine, PublicKey theirs, byte[] info)
      throws GeneralSecurityException {
    KeyAgreement ecdh = KeyAgreement.getInstance("ECDH");
    ecdh.init(mine);
    // The JDK checks that the peer's point is on the curve (no invalid-curve attack on our key).
    ecdh.doPhase(theirs, true);
    byte[] secret = ecdh.generateSecret();
    try {
      return hkdfSha256(secret, info, 32);
    } finally {
      Arrays.fill(secret, (byte) 0);
    }
  }

  private static Cipher aes(int mode, byte[] key, byte[] nonce, byte[] info)
      throws GeneralSecurityException {
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(mode, new SecretKeySpec(key, "AES"), new GCMParameterSpec(TAG_BITS, nonce));
    cipher.updateAAD(info);
    return cipher;
  }

  /** HKDF-SHA256 (RFC 5869) with an empty salt: extract, then expand to {@code length} bytes. */
  static byte[] hkdfSha256(byte[] secret, byte[] info, int length) throws GeneralSecurityException {
    Mac hmac = Mac.getInstance("HmacSHA256");
    hmac.init(new SecretKeySpec(new byte[32], "HmacSHA256"));
    byte[] prk = hmac.doFinal(secret);
    hmac.init(new SecretKeySpec(prk, "HmacSHA256"));
    ByteArrayOutputStream okm = new ByteArrayOutputStream();
    byte[] block = new byte[0];
    for (int i = 1; okm.size() < length; i++) {
      hmac.update(block);
      hmac.update(info);
      hmac.update((byte) i);
      block = hmac.doFinal();
      okm.writeBytes(block);
    }
    return Arrays.copyOf(okm.toByteArray(), length);
  }

  /** The label, the job id and the recipient's key id, each length-prefixed: unambiguous. */
  private static byte[] info(String jobId, String recipientKid) {
    ByteArrayOutputStream info = new ByteArrayOutputStream();
    for (String part : List.of(LABEL, jobId, recipientKid)) {
      byte[] bytes = utf8(part);
      info.writeBytes(ByteBuffer.allocate(4).putInt(bytes.length).array());
      info.writeBytes(bytes);
    }
    return info.toByteArray();
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
