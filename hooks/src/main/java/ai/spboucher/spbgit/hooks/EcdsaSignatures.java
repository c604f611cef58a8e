package ai.spboucher.spbgit.hooks;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.util.Arrays;

/** Converts between the JOSE form of an ES256 signature (R || S, 32 bytes each) and the DER form the JCA uses. */
final class EcdsaSignatures {

  private static final int COMPONENT_LENGTH = 32;

  private EcdsaSignatures() {
  }

  static byte[] joseToDer(byte[] jose) {
    byte[] r = derInteger(Arrays.copyOfRange(jose, 0, COMPONENT_LENGTH));
    byte[] s = derInteger(Arrays.copyOfRange(jose, COMPONENT_LENGTH, 2 * COMPONENT_LENGTH));
    ByteArrayOutputStream der = new ByteArrayOutputStream();
    der.write(0x30);
    der.write(r.length + s.length);
    der.writeBytes(r);
    der.writeBytes(s);
    return der.toByteArray();
  }

  private static byte[] derInteger(byte[] unsigned) {
    byte[] value = new BigInteger(1, unsigned).toByteArray();
    byte[] der = new byte[value.length + 2];
    der[0] = 0x02;
    der[1] = (byte) value.length;
    System.arraycopy(value, 0, der, 2, value.length);
    return der;
  }
}
