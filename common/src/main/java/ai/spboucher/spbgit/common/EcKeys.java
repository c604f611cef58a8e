package ai.spboucher.spbgit.common;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.ECKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

/**
 * The project's P-256 keys as files: PEM public keys (SubjectPublicKeyInfo) and private keys
 * (PKCS#8), their key ids, and new key pairs whose private half only its owner can read. Used for
 * the gateway's job-token and job-bus signing keys, the runners' sealing keys and the stand-alone
 * hook's key file. Every key read is checked to be on P-256, the only curve ES256 and the sealed
 * job token use. Reading and creating files block.
 */
public final class EcKeys {

  private static final String BEGIN_PUBLIC = "-----BEGIN PUBLIC KEY-----";
  private static final String END_PUBLIC = "-----END PUBLIC KEY-----";
  private static final String BEGIN_PRIVATE = "-----BEGIN PRIVATE KEY-----";
  private static final String END_PRIVATE = "-----END PRIVATE KEY-----";

  /** The order of P-256's base point: a key of another curve has another. */
  private static final BigInteger P256_ORDER =
      new BigInteger("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551", 16);

  private EcKeys() {}

  /** A fresh P-256 key pair. */
  public static KeyPair generate() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("P-256 keys are not available", e);
    }
  }

  /**
   * The {@code kid} of a key: the first 16 characters of the base64url SHA-256 of its
   * SubjectPublicKeyInfo, so everyone holding the same public key file derives the same id.
   */
  public static String keyId(PublicKey key) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getEncoded());
      return Base64.getUrlEncoder().withoutPadding().encodeToString(digest).substring(0, 16);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  public static String publicPem(PublicKey key) {
    return pem(BEGIN_PUBLIC, key.getEncoded(), END_PUBLIC);
  }

  public static String privatePem(PrivateKey key) {
    return pem(BEGIN_PRIVATE, key.getEncoded(), END_PRIVATE);
  }

  /** Parses a PEM public key; refuses anything but a P-256 key. */
  public static PublicKey publicFromPem(String pem) throws GeneralSecurityException {
    return publicFromDer(derOf(pem, BEGIN_PUBLIC, END_PUBLIC, "public"));
  }

  /** Reads a DER public key (SubjectPublicKeyInfo); refuses anything but a P-256 key. */
  public static PublicKey publicFromDer(byte[] der) throws GeneralSecurityException {
    return requireP256(KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(der)));
  }

  /** Parses a PEM (PKCS#8) private key; refuses anything but a P-256 key. */
  public static PrivateKey privateFromPem(String pem) throws GeneralSecurityException {
    byte[] der = derOf(pem, BEGIN_PRIVATE, END_PRIVATE, "private");
    return requireP256(KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der)));
  }

  /** Reads a PEM public key file. Blocking. */
  public static PublicKey readPublic(Path file) throws IOException, GeneralSecurityException {
    return publicFromPem(Files.readString(file, StandardCharsets.US_ASCII));
  }

  /** Reads a PEM private key file. Blocking. */
  public static PrivateKey readPrivate(Path file) throws IOException, GeneralSecurityException {
    return privateFromPem(Files.readString(file, StandardCharsets.US_ASCII));
  }

  /**
   * Where a key's public half is kept: beside the private file, {@code name.pem} giving {@code
   * name.pub.pem}.
   */
  public static Path publicFileBeside(Path privateFile) {
    String name = privateFile.getFileName().toString();
    String stem = name.endsWith(".pem") ? name.substring(0, name.length() - 4) : name;
    return privateFile.resolveSibling(stem + ".pub.pem");
  }

  /**
   * Writes a new key pair: its public half to {@code publicFile}, then its private half to {@code
   * privateFile} (mode 0600), which is moved into place last, so an existing private file always
   * has its public file. Creates missing directories. Blocking.
   */
  public static KeyPair create(Path privateFile, Path publicFile) throws IOException {
    Files.createDirectories(privateFile.toAbsolutePath().getParent());
    Files.createDirectories(publicFile.toAbsolutePath().getParent());
    KeyPair pair = generate();
    Path tmp = privateFile.resolveSibling(privateFile.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(
        tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    DurableFiles.write(tmp, privatePem(pair.getPrivate()).getBytes(StandardCharsets.US_ASCII));
    DurableFiles.write(publicFile, publicPem(pair.getPublic()).getBytes(StandardCharsets.US_ASCII));
    Files.move(tmp, privateFile, StandardCopyOption.ATOMIC_MOVE);
    return pair;
  }

  private static <K extends Key> K requireP256(K key) throws GeneralSecurityException {
    if (!(key instanceof ECKey ec) || !P256_ORDER.equals(ec.getParams().getOrder())) {
      throw new GeneralSecurityException("not a P-256 key");
    }
    return key;
  }

  private static byte[] derOf(String pem, String begin, String end, String what)
      throws GeneralSecurityException {
    int start = pem.indexOf(begin);
    int stop = pem.indexOf(end);
    if (start < 0 || stop < start) {
      throw new GeneralSecurityException("not a PEM " + what + " key");
    }
    try {
      return Base64.getDecoder()
          .decode(pem.substring(start + begin.length(), stop).replaceAll("\\s", ""));
    } catch (IllegalArgumentException e) {
      throw new GeneralSecurityException("not a PEM " + what + " key", e);
    }
  }

  private static String pem(String begin, byte[] der, String end) {
    return begin
        + "\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n"
        + end
        + "\n";
  }
}
