package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Reads audit log entries into {@link AuditEvent}s and writes them back: a line the gateway wrote
 * decodes to an event that encodes to the same bytes ({@code seq}, {@code ts} and {@code prev}
 * first, then the event's fields in the order it wrote them, nulls included). Entries of older
 * releases decode with the defaults the gateway has always read them with; an event it does not
 * know decodes to {@link OtherEvent}, kept as it is.
 */
public final class AuditEventCodec {

  /** Each event's name in the log, its record, and how an entry is read into it. */
  private record Kind(
      String name, Class<? extends AuditEvent> type, Function<JsonObject, AuditEvent> reader) {

    /** An event whose entry is its record's components ({@link EventFields#of}). */
    static Kind ofFields(String name, Class<? extends AuditEvent> type) {
      return new Kind(name, type, entry -> EventFields.read(type, entry));
    }
  }

  private static final List<Kind> KINDS =
      List.of(
          new Kind("job_created", JobCreated.class, JobCreated::from),
          Kind.ofFields("job_dispatched", JobDispatched.class),
          Kind.ofFields("job_started", JobStarted.class),
          new Kind("refs_written", RefsWritten.class, RefsWritten::from),
          new Kind("job_finished", JobFinished.class, JobFinished::from),
          Kind.ofFields("job_approved", JobApproved.class),
          Kind.ofFields("job_rejected", JobRejected.class),
          Kind.ofFields("job_superseded", JobSuperseded.class),
          Kind.ofFields("refs_deleted", RefsDeleted.class),
          Kind.ofFields("review_comment", ReviewComment.class),
          Kind.ofFields("job_revised", JobRevised.class),
          Kind.ofFields("job_refused", JobRefused.class));

  private static final Map<String, Kind> BY_NAME =
      KINDS.stream().collect(Collectors.toUnmodifiableMap(Kind::name, kind -> kind));

  private static final Map<Class<?>, String> NAMES =
      KINDS.stream().collect(Collectors.toUnmodifiableMap(Kind::type, Kind::name));

  private AuditEventCodec() {}

  /**
   * A stored entry: the log's envelope and the event.
   *
   * @param seq the entry's line number, or null in an entry not read from a log
   * @param ts when it was appended, or null likewise
   * @param prev the hash of the line before, or null likewise
   */
  public record Entry(Long seq, String ts, String prev, AuditEvent event) {}

  /** The event an entry holds; the envelope's fields are not part of it. */
  public static AuditEvent event(JsonObject entry) {
    Kind kind = entry.getValue("event") instanceof String name ? BY_NAME.get(name) : null;
    if (kind == null) {
      JsonObject fields = entry.copy();
      fields.remove("seq");
      fields.remove("ts");
      fields.remove("prev");
      return new OtherEvent(fields);
    }
    return kind.reader().apply(entry);
  }

  /** The name the log gives events of {@code type}, e.g. {@code job_created}. */
  public static String nameOf(Class<? extends AuditEvent> type) {
    String name = NAMES.get(type);
    if (name == null) {
      throw new IllegalArgumentException("no event name for " + type);
    }
    return name;
  }

  /** A stored entry with its envelope. */
  public static Entry decode(JsonObject entry) {
    return new Entry(
        entry.getLong("seq"), entry.getString("ts"), entry.getString("prev"), event(entry));
  }

  /** A stored line, as {@link #decode}. */
  public static Entry decode(String line) {
    return decode(new JsonObject(line));
  }

  /** What {@link AuditLog#append} is given for {@code event}. */
  public static JsonObject encode(AuditEvent event) {
    return event.toJson();
  }

  /** The line the log stores for {@code entry}, without its newline. */
  public static String encodeLine(Entry entry) {
    JsonObject stored =
        new JsonObject().put("seq", entry.seq()).put("ts", entry.ts()).put("prev", entry.prev());
    encode(entry.event()).forEach(field -> stored.put(field.getKey(), field.getValue()));
    return stored.encode();
  }
}
