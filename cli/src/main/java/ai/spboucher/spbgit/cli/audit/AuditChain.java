package ai.spboucher.spbgit.cli.audit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * Checks the audit entries the API serves: {@code seq} strictly increasing (and 1..n without gaps when the list
 * is the whole log), and every entry's {@code prev} equal to the SHA-256 of the entry before it.
 *
 * <p>The gateway hashes each line's exact bytes, and the API serves the entries parsed. A line the gateway wrote
 * is compact JSON in its own field order, and Jackson re-encodes it byte for byte (same library, same
 * defaults), so the hash can be recomputed here. This proves the served entries form an intact chain; only
 * {@code java -jar spb-gateway.jar audit verify} on the gateway's host reads the file itself.
 */
public final class AuditChain {

  /** What the check found; {@code problem} is null when it passed. */
  public record Result(int entries, int linksChecked, String problem) {
    public boolean ok() {
      return problem == null;
    }
  }

  static final String GENESIS_PREV = "0".repeat(64);
  private static final ObjectMapper JSON = new ObjectMapper();

  private AuditChain() {
  }

  /** {@code complete}: the entries are the whole log (no repo or job filter), so seq must run 1..n. */
  public static Result check(List<JsonNode> entries, boolean complete) {
    long previousSeq = 0;
    int links = 0;
    for (int i = 0; i < entries.size(); i++) {
      JsonNode entry = entries.get(i);
      if (!entry.path("seq").canConvertToLong() || !entry.path("seq").isIntegralNumber()) {
        return new Result(entries.size(), links, "entry " + (i + 1) + " has no integer seq");
      }
      long seq = entry.path("seq").asLong();
      if (seq <= previousSeq) {
        return new Result(entries.size(), links, "seq " + seq + " follows seq " + previousSeq
            + ": entries are out of order or repeated");
      }
      if (complete && seq != previousSeq + 1) {
        return new Result(entries.size(), links, "seq jumps from " + previousSeq + " to " + seq
            + ": entries are missing (deleted, or lines the gateway cannot parse)");
      }
      String prev = entry.path("prev").asText("");
      String expected = seq == 1 ? GENESIS_PREV : i > 0 && seq == previousSeq + 1 ? hashOf(entries.get(i - 1)) : null;
      if (expected != null) {
        if (!expected.equals(prev)) {
          return new Result(entries.size(), links, seq == 1 ? "seq 1: prev is not 64 zeros"
              : "seq " + seq + ": prev does not match the hash of seq " + previousSeq);
        }
        links++;
      }
      previousSeq = seq;
    }
    return new Result(entries.size(), links, null);
  }

  /** The SHA-256 (hex) of the entry encoded as the gateway wrote it: compact JSON, fields in order. */
  static String hashOf(JsonNode entry) {
    try {
      byte[] line = JSON.writeValueAsString(entry).getBytes(StandardCharsets.UTF_8);
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(line));
    } catch (JsonProcessingException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot hash an audit entry", e);
    }
  }
}
