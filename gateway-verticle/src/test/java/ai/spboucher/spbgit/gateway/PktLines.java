package ai.spboucher.spbgit.gateway;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** Builds raw git protocol requests, for the requests a well-behaved git client refuses to send. */
public final class PktLines {

  static final String ZERO_ID = "0".repeat(40);

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();

  public PktLines line(String payload) {
    byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
    out.writeBytes(String.format("%04x", bytes.length + 4).getBytes(StandardCharsets.US_ASCII));
    out.writeBytes(bytes);
    return this;
  }

  public PktLines flush() {
    out.writeBytes("0000".getBytes(StandardCharsets.US_ASCII));
    return this;
  }

  public PktLines raw(byte[] bytes) {
    out.writeBytes(bytes);
    return this;
  }

  public byte[] bytes() {
    return out.toByteArray();
  }

  /** A valid pack with no objects, for ref updates that point at objects the server already has. */
  public static byte[] emptyPack() throws Exception {
    ByteBuffer header =
        ByteBuffer.allocate(12).put("PACK".getBytes(StandardCharsets.US_ASCII)).putInt(2).putInt(0);
    byte[] head = header.array();
    byte[] trailer = MessageDigest.getInstance("SHA-1").digest(head);
    ByteBuffer pack = ByteBuffer.allocate(32).put(head).put(trailer);
    return pack.array();
  }

  /** A receive-pack request creating {@code ref} at {@code id}. */
  public static byte[] createRef(String ref, String id, String capabilities) throws Exception {
    return new PktLines()
        .line(ZERO_ID + " " + id + " " + ref + "\0" + capabilities + "\n")
        .flush()
        .raw(emptyPack())
        .bytes();
  }
}
