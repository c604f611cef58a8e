package ai.spboucher.spbgit.gateway.audit;

import ai.spboucher.spbgit.proto.AuditChain;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * The append-only audit log of agent jobs, {@code <data>/agent-jobs.jsonl}: one compact JSON object
 * per line, each carrying {@code seq} (its 1-based line number), {@code ts} (ISO-8601 instant) and
 * {@code prev} (hex SHA-256 of the previous line's exact bytes, 64 zeros for the first line), so
 * that editing, deleting, reordering or inserting a line is detected by {@link #verify(Path)}.
 *
 * <p>Crash handling: a crash mid-append leaves a torn last line. {@link #open} moves such a line
 * (no trailing newline, or not a JSON object) to a sibling {@code
 * agent-jobs.jsonl.torn-<epochMillis>}, truncates the log to its last complete line, and then
 * appends a {@value #TORN_LINE_SET_ASIDE} entry naming the side file, the bytes set aside and their
 * SHA-256: the repair is part of the chain, so it can be told apart from lines cut off by hand.
 * Nothing is ever appended after a torn line. A bad line anywhere else is tampering or disk
 * corruption: it is left in place, the log stays open for appends, and {@link #verify(Path)} keeps
 * reporting it.
 *
 * <p>A failed append (disk full, I/O error) is rolled back: the file is truncated to its last
 * complete line, so a later append never follows a partial one. When the file system has no space
 * left, the failure is a {@link AuditStorageFullException}.
 *
 * <p>Reads ({@link #entries()}) come from an in-memory copy of the lines, loaded at open and
 * extended by every append, so they never touch the disk; the whole log is held in memory (entries
 * are small).
 *
 * <p>Threading: every method blocks (file I/O and fsync) and belongs on a worker thread, never on
 * an event loop. All instance methods are synchronized, so appends from several threads are
 * serialised and each line's {@code prev} is the line written just before it. Do not interrupt a
 * thread inside {@link #append}: an interrupt closes the underlying channel and the log must then
 * be reopened.
 */
public final class AuditLog implements Closeable {

  /** The {@code prev} of the first line. */
  public static final String GENESIS_PREV = AuditChain.GENESIS_PREV;

  /** The event {@link #open} appends after it set aside a torn last line. */
  public static final String TORN_LINE_SET_ASIDE = "torn_line_set_aside";

  private static final System.Logger LOG = System.getLogger(AuditLog.class.getName());
  private static final List<String> RESERVED_FIELDS = List.of("seq", "ts", "prev");

  private final Path file;
  private final Clock clock;
  private final FileChannel channel;
  private final FileLock lock;
  private final List<String> entries;
  private final AuditChain.Result checkAtOpen;
  private long lines;
  private long size;
  private String lastHash;

  /**
   * A failed append could not be rolled back: the file may hold a partial line past {@link #size}.
   */
  private boolean dirty;

  private AuditLog(
      Path file,
      Clock clock,
      FileChannel channel,
      FileLock lock,
      LogLines content,
      AuditChain.Result checkAtOpen) {
    this.file = file;
    this.clock = clock;
    this.channel = channel;
    this.lock = lock;
    this.checkAtOpen = checkAtOpen;
    this.entries = new ArrayList<>();
    for (byte[] line : content.complete()) {
      if (AuditChain.isObject(line)) {
        entries.add(new String(line, StandardCharsets.UTF_8));
      }
    }
    this.lines = content.complete().size();
    this.size = content.completeLength();
    this.lastHash =
        lines == 0 ? GENESIS_PREV : AuditChain.hash(content.complete().get((int) lines - 1));
  }

  /**
   * Opens the log, creating it (and its directory) if missing, sets aside a torn last line (and
   * records that it did) and checks the chain; a broken chain is logged, not fatal. Takes an
   * exclusive file lock so that a second gateway on the same data directory fails here instead of
   * interleaving lines. Blocking.
   *
   * @throws IOException if the file cannot be read or locked, or a torn line cannot be set aside
   *     and recorded
   */
  public static AuditLog open(Path file, Clock clock) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Files.createDirectories(dir);
    FileChannel channel =
        FileChannel.open(
            file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    try {
      FileLock lock = LogFile.lockExclusively(channel, file);
      LogFile.syncDirectory(dir);
      LogLines content = LogLines.split(LogFile.readAll(channel));
      JsonObject repair = null;
      byte[] torn = TornLine.of(content);
      if (torn != null) {
        content = content.withoutTornLine();
        repair = TornLine.setAside(file, clock, channel, content, torn);
      }
      AuditChain.Result check = AuditChain.checkLog(content.bytes());
      if (!check.ok()) {
        LOG.log(
            System.Logger.Level.WARNING,
            "audit log "
                + file
                + " fails verification ("
                + check.message()
                + "); it stays as it is and new entries are appended after it");
      }
      AuditLog log = new AuditLog(file, clock, channel, lock, content, check);
      if (repair != null) {
        log.append(repair);
      }
      return log;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /**
   * Checks every line of a log file: a JSON object whose {@code seq} is its line number, whose
   * {@code ts} is an ISO-8601 instant and whose {@code prev} is the SHA-256 of the previous line; a
   * last line without a newline is reported as torn. Reads the file without locking it: run against
   * a live gateway, an append in progress can show up as a torn last line. Blocking.
   *
   * @throws IOException if the file cannot be read (including when it does not exist)
   */
  public static AuditChain.Result verify(Path file) throws IOException {
    return AuditChain.checkLog(Files.readAllBytes(file));
  }

  /**
   * {@link #verify(Path)} on this log's file, serialised with appends so that no append is seen
   * half-done.
   */
  public synchronized AuditChain.Result verify() throws IOException {
    return AuditChain.checkLog(LogFile.readAll(channel));
  }

  /**
   * What the chain check found when the log was opened (after any torn last line was set aside).
   */
  public AuditChain.Result checkAtOpen() {
    return checkAtOpen;
  }

  public Path file() {
    return file;
  }

  /**
   * Appends {@code event} with {@code seq}, {@code ts} and {@code prev} prepended, and fsyncs
   * before returning. Returns the entry as stored (decoded from the written line, exactly as a
   * later reader sees it).
   *
   * @throws IllegalArgumentException if the event sets {@code seq}, {@code ts} or {@code prev}
   * @throws AuditStorageFullException if the file system has no space left for the line; as below
   * @throws IOException if the write or the fsync fails (I/O error); the file is then truncated
   *     back to its previous length, best effort, and the log's state is unchanged
   */
  public synchronized JsonObject append(JsonObject event) throws IOException {
    return appendAll(List.of(event)).get(0);
  }

  /**
   * Appends {@code events} in order, exactly as {@link #append} would one after the other, but with
   * one write and one fsync for all of them: job changes that arrive together share the cost of
   * flushing the disk. Either every event is stored or, when the write or the fsync fails, none is
   * (as for {@link #append}).
   *
   * @throws IllegalArgumentException if an event sets {@code seq}, {@code ts} or {@code prev};
   *     nothing is written
   */
  public synchronized List<JsonObject> appendAll(List<JsonObject> events) throws IOException {
    for (JsonObject event : events) {
      Objects.requireNonNull(event, "event");
      for (String reserved : RESERVED_FIELDS) {
        if (event.containsKey(reserved)) {
          throw new IllegalArgumentException(
              "an audit event must not set '" + reserved + "': the log assigns it");
        }
      }
    }
    List<String> encoded = new ArrayList<>(events.size());
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    String prev = lastHash;
    for (JsonObject event : events) {
      JsonObject stored =
          new JsonObject()
              .put("seq", lines + encoded.size() + 1)
              .put("ts", clock.instant().toString())
              .put("prev", prev);
      event.forEach(field -> stored.put(field.getKey(), field.getValue()));
      String text = stored.encode();
      byte[] line = text.getBytes(StandardCharsets.UTF_8);
      // JSON escapes control characters, so this only guards against a broken encoder splitting the
      // chain.
      for (byte b : line) {
        if (b == LogLines.NEWLINE) {
          throw new IllegalStateException("the JSON encoder produced a raw newline");
        }
      }
      bytes.write(line, 0, line.length);
      bytes.write(LogLines.NEWLINE);
      prev = AuditChain.hash(line);
      encoded.add(text);
    }
    rollBackIfDirty();
    ByteBuffer buffer = ByteBuffer.wrap(bytes.toByteArray());
    try {
      long position = size;
      while (buffer.hasRemaining()) {
        position += channel.write(buffer, position);
      }
      channel.force(true);
    } catch (IOException e) {
      rollBack(e);
      throw AuditStorageFullException.isOutOfSpace(e, file, bytes.size())
          ? new AuditStorageFullException(file, e)
          : e;
    }
    size += bytes.size();
    lines += encoded.size();
    lastHash = prev;
    entries.addAll(encoded);
    List<JsonObject> stored = new ArrayList<>(encoded.size());
    encoded.forEach(text -> stored.add(new JsonObject(text)));
    return stored;
  }

  /** Every well-formed entry, oldest first, as fresh objects the caller may modify. */
  public synchronized List<JsonObject> entries() {
    return entries(entry -> true);
  }

  /** The well-formed entries that match {@code filter}, oldest first, as fresh objects. */
  public synchronized List<JsonObject> entries(Predicate<JsonObject> filter) {
    List<JsonObject> matching = new ArrayList<>();
    for (String line : entries) {
      JsonObject entry = new JsonObject(line);
      if (filter.test(entry)) {
        matching.add(entry);
      }
    }
    return matching;
  }

  /**
   * The stored lines of the well-formed entries that match {@code filter}, oldest first, byte for
   * byte as in the file (without newlines): what a verifier elsewhere hashes.
   */
  public synchronized List<String> lines(Predicate<JsonObject> filter) {
    List<String> matching = new ArrayList<>();
    for (String line : entries) {
      if (filter.test(new JsonObject(line))) {
        matching.add(line);
      }
    }
    return matching;
  }

  /** Number of lines in the log, which is also the {@code seq} of the last one. */
  public synchronized long size() {
    return lines;
  }

  /** Releases the file lock and closes the file. */
  @Override
  public synchronized void close() throws IOException {
    try {
      if (lock.isValid()) {
        lock.release();
      }
    } finally {
      channel.close();
    }
  }

  private void rollBack(IOException failure) {
    try {
      channel.truncate(size);
      channel.force(true);
    } catch (IOException e) {
      dirty = true;
      failure.addSuppressed(e);
    }
  }

  private void rollBackIfDirty() throws IOException {
    if (dirty) {
      channel.truncate(size);
      channel.force(true);
      dirty = false;
    }
  }
}
