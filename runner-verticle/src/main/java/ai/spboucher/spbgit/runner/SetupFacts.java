package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.StatusChange;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a job's setup phase established, for the owner's record: on a cache hit the key restored and
 * who produced that entry (the job and the owner-trusted commit its setup ran on), whether a
 * setup's cache was kept, and what setup changed in the checkout (none of which the proposal
 * holds). Published with STARTED (the hit) and FINISHED (the rest).
 *
 * <p>Threading: filled in by the job's own thread only.
 */
final class SetupFacts {

  /** Where the setup phase's entrypoint lists its changes, relative to the job's {@code /work}. */
  static final String CHANGES_FILE = ".spb-setup-changes";

  static final int MAX_CHANGES = 100;
  static final int MAX_CHANGE_CHARS = 300;
  private static final int MAX_FILE_BYTES = MAX_CHANGES * (MAX_CHANGE_CHARS + 1);

  private String cacheKey = "";
  private String producerJob = "";
  private String producerCommit = "";
  private String cacheNote = "";
  private List<String> setupChanges = List.of();

  /** The cache hit: {@code key} restored, kept by {@code producerJob}'s setup on {@code commit}. */
  void hit(String key, String producerJob, String producerCommit) {
    this.cacheKey = key;
    this.producerJob = producerJob == null ? "" : producerJob;
    this.producerCommit = producerCommit == null ? "" : producerCommit;
  }

  /** Whether the setup's cache was kept, in words ("kept (N bytes)", "not cached: …"). */
  void cacheNote(String note) {
    this.cacheNote = note;
  }

  String cacheNote() {
    return cacheNote;
  }

  List<String> setupChanges() {
    return setupChanges;
  }

  /**
   * Reads and removes the list the setup container left in {@code workDir}: at most {@value
   * #MAX_CHANGES} lines of {@value #MAX_CHANGE_CHARS} characters, control characters dropped. The
   * file was written by code the runner does not control: it is read only if it is a regular file
   * (never through a link, never a fifo), and only so far. Call it once the setup container is gone
   * and before the agent's starts, so nothing writes the volume meanwhile. Blocking.
   */
  void readChanges(Path workDir) throws IOException {
    Path file = workDir.resolve(CHANGES_FILE);
    BasicFileAttributes attributes;
    try {
      attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      return; // Setup failed or listed nothing.
    }
    if (attributes.isRegularFile()) {
      byte[] bytes = readAtMost(file, MAX_FILE_BYTES);
      setupChanges = lines(new String(bytes, StandardCharsets.UTF_8));
    }
    if (!attributes.isDirectory()) {
      Files.deleteIfExists(file);
    }
  }

  private static byte[] readAtMost(Path file, int limit) throws IOException {
    try (SeekableByteChannel channel =
            Files.newByteChannel(file, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
        InputStream in = Channels.newInputStream(channel)) {
      return in.readNBytes(limit);
    }
  }

  static List<String> lines(String text) {
    List<String> lines = new ArrayList<>();
    for (String line : text.split("\n")) {
      String clean =
          line.codePoints()
              .filter(c -> c >= 0x20 && c != 0x7f)
              .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
              .toString();
      if (clean.isBlank()) {
        continue;
      }
      lines.add(clean.length() > MAX_CHANGE_CHARS ? clean.substring(0, MAX_CHANGE_CHARS) : clean);
      if (lines.size() == MAX_CHANGES) {
        break;
      }
    }
    return List.copyOf(lines);
  }

  /** STARTED's share: the hit's key and producer. */
  StatusChange.Builder started() {
    return StatusChange.newBuilder()
        .setCacheKey(cacheKey)
        .setCacheProducerJob(producerJob)
        .setCacheProducerCommit(producerCommit);
  }

  /** FINISHED's share: whether the cache was kept, and what setup changed in the checkout. */
  StatusChange.Builder finished() {
    return StatusChange.newBuilder().setCacheNote(cacheNote).addAllSetupChanges(setupChanges);
  }
}
