package ai.spboucher.spbgit.proto;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The rules of the audit log's hash chain ({@code agent-jobs.jsonl}, docs/protocol.md): one compact
 * JSON object a line, carrying {@code seq} (its 1-based line number), {@code ts} (an ISO-8601
 * instant) and {@code prev} (the hex SHA-256 of the previous line's exact bytes, 64 zeros on the
 * first line). The gateway's log checks its file with {@link #checkLog}; the CLI checks the stored
 * lines the API serves with {@link #checkServed}. Both hash bytes as stored, never a re-encoding,
 * so no JSON library's output has to match another's.
 *
 * <p>Plain Java, stateless and thread-safe.
 */
public final class AuditChain {

  /** The {@code prev} of the first line. */
  public static final String GENESIS_PREV = "0".repeat(64);

  /**
   * What a check found: {@code problem} is null when every line checks out, otherwise it names the
   * first bad line ({@code badLine}, 1-based among the lines checked).
   */
  public record Result(long lines, long linksChecked, long badLine, String problem) {

    public boolean ok() {
      return problem == null;
    }

    /** One line for people: {@code N entries, chain intact}, or {@code line K: why}. */
    public String message() {
      return ok() ? lines + " entries, chain intact" : "line " + badLine + ": " + problem;
    }
  }

  private static final byte NEWLINE = '\n';
  private static final ObjectMapper JSON =
      JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();

  private AuditChain() {}

  /**
   * Checks a whole log file's bytes: line {@code n} has {@code seq} n, an instant {@code ts} and
   * the hash of line n-1 as {@code prev}; bytes after the last newline are a torn line.
   */
  public static Result checkLog(byte[] content) {
    List<byte[]> lines = completeLines(content);
    String prev = GENESIS_PREV;
    for (int i = 0; i < lines.size(); i++) {
      long lineNumber = i + 1L;
      String problem = problemWith(lines.get(i), lineNumber, prev);
      if (problem != null) {
        return new Result(lines.size(), i, lineNumber, problem);
      }
      prev = hash(lines.get(i));
    }
    int tail = content.length - (int) completeLength(lines);
    if (tail > 0) {
      return new Result(
          lines.size(),
          lines.size(),
          lines.size() + 1L,
          "torn: " + tail + " bytes without a trailing newline");
    }
    return new Result(lines.size(), lines.size(), 0, null);
  }

  /**
   * Checks stored lines as the API serves them, oldest first: {@code seq} strictly increasing, 1..n
   * without gaps when {@code complete} (the whole log, no filter), and {@code prev} equal to the
   * hash of the line before wherever two served lines are neighbours in the log. A filtered list
   * can only link its neighbours.
   */
  public static Result checkServed(List<byte[]> lines, boolean complete) {
    long previousSeq = 0;
    long links = 0;
    for (int i = 0; i < lines.size(); i++) {
      long index = i + 1L;
      JsonNode entry = parse(lines.get(i));
      if (entry == null) {
        return new Result(lines.size(), links, index, "not a valid UTF-8 JSON object");
      }
      JsonNode seqNode = entry.path("seq");
      if (!seqNode.isIntegralNumber() || !seqNode.canConvertToLong()) {
        return new Result(lines.size(), links, index, "entry has no integer seq");
      }
      long seq = seqNode.asLong();
      if (seq <= previousSeq) {
        return new Result(
            lines.size(),
            links,
            index,
            "seq "
                + seq
                + " follows seq "
                + previousSeq
                + ": entries are out of order or repeated");
      }
      if (complete && seq != previousSeq + 1) {
        return new Result(
            lines.size(),
            links,
            index,
            "seq jumps from "
                + previousSeq
                + " to "
                + seq
                + ": entries are missing (deleted, or lines the gateway cannot parse)");
      }
      String expected =
          seq == 1 ? GENESIS_PREV : i > 0 && seq == previousSeq + 1 ? hash(lines.get(i - 1)) : null;
      if (expected != null) {
        if (!expected.equals(entry.path("prev").asText(""))) {
          return new Result(
              lines.size(),
              links,
              index,
              seq == 1
                  ? "seq 1: prev is not 64 zeros"
                  : "seq " + seq + ": prev does not match the hash of seq " + previousSeq);
        }
        links++;
      }
      previousSeq = seq;
    }
    return new Result(lines.size(), links, 0, null);
  }

  /**
   * Why {@code line} cannot be line {@code lineNumber} of a log whose previous line hashes to
   * {@code prev}.
   */
  static String problemWith(byte[] line, long lineNumber, String prev) {
    JsonNode entry = parse(line);
    if (entry == null) {
      return "not a valid UTF-8 JSON object";
    }
    JsonNode seq = entry.path("seq");
    if (!seq.isIntegralNumber() || !seq.canConvertToLong()) {
      return "seq is missing or not an integer";
    }
    if (seq.asLong() != lineNumber) {
      return "seq is " + seq.asText() + ", expected " + lineNumber;
    }
    if (!entry.path("ts").isTextual() || !isInstant(entry.path("ts").textValue())) {
      return "ts is missing or not an ISO-8601 instant";
    }
    if (!prev.equals(entry.path("prev").textValue())) {
      return lineNumber == 1
          ? "prev is not " + GENESIS_PREV.length() + " zeros, as the first line's must be"
          : "prev does not match the hash of line " + (lineNumber - 1);
    }
    return null;
  }

  /**
   * Whether {@code line} is exactly one JSON object in valid UTF-8, as every audit line must be.
   */
  public static boolean isObject(byte[] line) {
    return parse(line) != null;
  }

  /**
   * The hex SHA-256 of a line's exact bytes (without its newline): the next line's {@code prev}.
   */
  public static String hash(byte[] line) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(line));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM must provide SHA-256", e);
    }
  }

  /**
   * The complete lines of a file's bytes (each without its newline); what follows the last newline
   * is left out.
   */
  public static List<byte[]> completeLines(byte[] content) {
    List<byte[]> lines = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < content.length; i++) {
      if (content[i] == NEWLINE) {
        lines.add(Arrays.copyOfRange(content, start, i));
        start = i + 1;
      }
    }
    return lines;
  }

  /** Bytes taken by {@code lines}, a newline after each. */
  public static long completeLength(List<byte[]> lines) {
    long length = 0;
    for (byte[] line : lines) {
      length += line.length + 1;
    }
    return length;
  }

  private static JsonNode parse(byte[] line) {
    try {
      String text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(line)).toString();
      JsonNode node = JSON.readTree(text);
      return node != null && node.isObject() ? node : null;
    } catch (CharacterCodingException | JsonProcessingException e) {
      return null;
    }
  }

  private static boolean isInstant(String text) {
    try {
      Instant.parse(text);
      return true;
    } catch (DateTimeParseException e) {
      return false;
    }
  }
}
