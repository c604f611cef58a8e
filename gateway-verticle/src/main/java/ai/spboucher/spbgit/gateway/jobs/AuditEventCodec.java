package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.function.Function;

/**
 * Reads audit log entries into {@link AuditEvent}s and writes them back: a line the gateway wrote
 * decodes to an event that encodes to the same bytes ({@code seq}, {@code ts} and {@code prev}
 * first, then the event's fields in the order it wrote them, nulls included). Entries of older
 * releases decode with the defaults the gateway has always read them with; an event it does not
 * know decodes to {@link OtherEvent}, kept as it is.
 */
public final class AuditEventCodec {

  private static final Map<String, Function<JsonObject, AuditEvent>> READERS =
      Map.ofEntries(
          Map.entry(JobCreated.EVENT, JobCreated::from),
          Map.entry(JobDispatched.EVENT, e -> EventFields.read(JobDispatched.class, e)),
          Map.entry(JobStarted.EVENT, e -> EventFields.read(JobStarted.class, e)),
          Map.entry(RefsWritten.EVENT, RefsWritten::from),
          Map.entry(JobFinished.EVENT, JobFinished::from),
          Map.entry(JobApproved.EVENT, e -> EventFields.read(JobApproved.class, e)),
          Map.entry(JobRejected.EVENT, e -> EventFields.read(JobRejected.class, e)),
          Map.entry(JobSuperseded.EVENT, e -> EventFields.read(JobSuperseded.class, e)),
          Map.entry(RefsDeleted.EVENT, e -> EventFields.read(RefsDeleted.class, e)),
          Map.entry(ReviewComment.EVENT, e -> EventFields.read(ReviewComment.class, e)),
          Map.entry(JobRevised.EVENT, e -> EventFields.read(JobRevised.class, e)),
          Map.entry(JobRefused.EVENT, e -> EventFields.read(JobRefused.class, e)));

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
    Function<JsonObject, AuditEvent> reader =
        entry.getValue("event") instanceof String name ? READERS.get(name) : null;
    if (reader == null) {
      JsonObject fields = entry.copy();
      fields.remove("seq");
      fields.remove("ts");
      fields.remove("prev");
      return new OtherEvent(fields);
    }
    return reader.apply(entry);
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
