package ai.spboucher.spbgit.runner;

import java.io.BufferedInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * The tar {@link JobCache#keep} makes of a job's cache paths, counted before a byte of it is
 * written. A setup container ran the repository's third-party packages, so what it left is hostile:
 * a 1 GiB sparse file that takes no space in {@code /work}, fifty hard links to one big file.
 * Counted by what the tar holds instead (each file's apparent size, each hard-linked inode's data
 * once, every header), a cache over the bound is refused with nothing written, and {@link #write}
 * never writes more than was counted.
 *
 * <p>The tar: first {@link #PRODUCER_ENTRY} (who produced it, {@link CacheProducer}), then every
 * directory, file and link under each cache path as {@code work/...}, in {@link Files#walk} order,
 * never following a link: links are stored as links, and a file with more than one name as its data
 * under the first name met and tar hard-link entries for the others. Sockets, fifos and devices are
 * left out. Modification times are whole seconds and permissions the file's {@code rwxrwxrwx} bits,
 * so nothing but a long name or link target needs a PAX header.
 *
 * <p>Threading: not thread-safe; every method blocks (file I/O). Nothing may write the cache paths
 * meanwhile (the setup container is gone and the agent's does not exist yet); if something does,
 * {@link #write} gives up rather than write more than counted.
 */
final class CacheArchive {

  /** The tar's first entry: the producer record, outside {@code work/}. */
  static final String PRODUCER_ENTRY = "spbgit/producer.json";

  /** A producer record larger than this is not one this runner wrote. */
  private static final int PRODUCER_RECORD_LIMIT = 64 << 10;

  private static final int RECORD = 512;

  /** The two zero records that end a tar. */
  private static final long END = 2 * RECORD;

  private static final LinkOption[] NO_FOLLOW = {LinkOption.NOFOLLOW_LINKS};
  private static final int S_IFMT = 0170000;
  private static final int S_IFDIR = 0040000;
  private static final int S_IFREG = 0100000;
  private static final int S_IFLNK = 0120000;
  private static final String ATTRIBUTES = "unix:mode,nlink,dev,ino,size,lastModifiedTime";

  private final Path workDir;
  private final List<String> cachePaths;
  private final CacheProducer producer;

  /**
   * @param workDir the job's {@code /work} on the host
   * @param cachePaths absolute paths under {@code /work}
   */
  CacheArchive(Path workDir, List<String> cachePaths, CacheProducer producer) {
    this.workDir = workDir;
    this.cachePaths = List.copyOf(cachePaths);
    this.producer = producer;
  }

  /**
   * What the tar would hold.
   *
   * @param bytes its exact size, as {@link #write} would write it (a lower bound when not complete)
   * @param complete false when counting stopped early: more entries than fit the limit, each with a
   *     header of at least 512 bytes
   */
  record Count(long bytes, long entries, boolean complete) {}

  /**
   * Why the cache paths cannot be kept as they are: a link on the way to one, or a change while
   * they were written. The message completes "not cached: ".
   */
  static final class NotKept extends IOException {
    NotKept(String message) {
      super(message);
    }
  }

  /**
   * Counts the tar without writing it: every header as the tar stream would write it, every file's
   * apparent size (rounded up to whole records), each hard-linked inode's data once. Stops after
   * more entries than {@code limit} has room for (their headers alone pass it), so a setup that
   * made millions of files costs the runner no more than that.
   *
   * @throws NotKept when a directory on the way to a cache path is a link
   */
  Count count(long limit) throws IOException {
    long maxEntries = limit / RECORD + 1;
    long[] bytes = {END};
    long[] entries = {0};
    boolean complete =
        walk(
            item -> {
              bytes[0] += headerBytes(item.entry()) + padded(item.entry().getSize());
              return ++entries[0] <= maxEntries;
            });
    return new Count(bytes[0], entries[0], complete);
  }

  /**
   * Writes the tar to {@code out} (and closes it), never more than {@code counted} bytes: a file is
   * copied up to the size it had when its entry was made, and the stream refuses the first byte
   * past {@code counted}. Returns the bytes written.
   *
   * @throws NotKept when the cache paths changed since {@link #count}: more to write than counted,
   *     a file that shrank, a link on the way
   */
  long write(OutputStream out, long counted) throws IOException {
    CappedOutputStream capped = new CappedOutputStream(out, counted);
    byte[] buffer = new byte[1 << 20];
    try (TarArchiveOutputStream tar = tarStream(capped)) {
      walk(
          item -> {
            tar.putArchiveEntry(item.entry());
            if (item.data() != null) {
              tar.write(item.data());
            } else if (item.source() != null) {
              copy(item, tar, buffer);
            }
            tar.closeArchiveEntry();
            return true;
          });
    }
    return capped.written;
  }

  /** The producer record of a tar {@link #write} wrote; {@link CacheProducer#UNKNOWN} without. */
  static CacheProducer producer(Path tar) throws IOException {
    try (InputStream in = new BufferedInputStream(Files.newInputStream(tar, NO_FOLLOW), 4096);
        TarArchiveInputStream entries = new TarArchiveInputStream(in)) {
      TarArchiveEntry first = entries.getNextEntry();
      if (first == null || !isProducerRecord(first)) {
        return CacheProducer.UNKNOWN;
      }
      return CacheProducer.fromJson(entries.readNBytes((int) first.getSize()));
    }
  }

  /** Whether {@code entry} is a producer record (as the first entry of a tar). */
  static boolean isProducerRecord(TarArchiveEntry entry) {
    return entry.getName().equals(PRODUCER_ENTRY)
        && (entry.getLinkFlag() == TarConstants.LF_NORMAL
            || entry.getLinkFlag() == TarConstants.LF_OLDNORM)
        && entry.getSize() <= PRODUCER_RECORD_LIMIT;
  }

  /**
   * One entry of the tar: its header, and its data from {@code source} (a regular file's first
   * name) or {@code data} (the producer record); neither for directories and links.
   */
  private record Item(TarArchiveEntry entry, Path source, byte[] data) {}

  private interface Visitor {
    /** False to stop the walk. */
    boolean visit(Item item) throws IOException;
  }

  /** Visits the tar's entries in order; false when the visitor stopped it. */
  private boolean walk(Visitor visitor) throws IOException {
    byte[] record = producer.toJson();
    TarArchiveEntry header = new TarArchiveEntry(PRODUCER_ENTRY);
    header.setSize(record.length);
    header.setLastModifiedTime(FileTime.fromMillis(0));
    if (!visitor.visit(new Item(header, null, record))) {
      return false;
    }
    // (dev, inode) of each file with more than one name -> the tar name holding its data.
    Map<List<Object>, String> firstNames = new HashMap<>();
    for (String cachePath : cachePaths) {
      Path top = top(cachePath);
      if (top == null) {
        continue;
      }
      try (Stream<Path> paths = Files.walk(top)) {
        for (Path path : (Iterable<Path>) paths::iterator) {
          Item item = item(path, firstNames);
          if (item != null && !visitor.visit(item)) {
            return false;
          }
        }
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
    }
    return true;
  }

  /**
   * The cache path on the host, or null when there is nothing there; never through a link: a setup
   * could make {@code /work/repo} a link to {@code /usr/lib}, and the runner, root on the host,
   * would keep the host's files for the repository's next jobs.
   */
  private Path top(String cachePath) throws IOException {
    String relative = cachePath.substring(Math.min(cachePath.length(), "/work/".length()));
    if (!CacheRestore.underCachePaths(cachePath, List.of(cachePath))
        || relative.isEmpty()
        || relative.endsWith("/")
        || relative.equals(".")
        || relative.endsWith("/.")) {
      throw new NotKept(
          "the cache path " + cachePath + " is not a path under /work in normal form");
    }
    Path parts = Path.of(relative);
    Path at = workDir;
    for (int i = 0; i < parts.getNameCount() - 1; i++) {
      at = at.resolve(parts.getName(i));
      if (Files.isSymbolicLink(at)) {
        throw new NotKept(
            "/work/" + workDir.relativize(at) + " on the way to " + cachePath + " is a link");
      }
      if (!Files.isDirectory(at, NO_FOLLOW)) {
        return null;
      }
    }
    Path top = at.resolve(parts.getFileName());
    return Files.exists(top, NO_FOLLOW) ? top : null;
  }

  private Item item(Path path, Map<List<Object>, String> firstNames) throws IOException {
    Map<String, Object> attributes = Files.readAttributes(path, ATTRIBUTES, NO_FOLLOW);
    int mode = (Integer) attributes.get("mode");
    String name = "work/" + workDir.relativize(path);
    TarArchiveEntry entry;
    Path source = null;
    switch (mode & S_IFMT) {
      case S_IFLNK -> {
        entry = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
        entry.setLinkName(Files.readSymbolicLink(path).toString());
      }
      case S_IFDIR -> entry = new TarArchiveEntry(name + "/");
      case S_IFREG -> {
        String first = null;
        if ((Integer) attributes.get("nlink") > 1) {
          first =
              firstNames.putIfAbsent(List.of(attributes.get("dev"), attributes.get("ino")), name);
        }
        if (first != null) {
          entry = new TarArchiveEntry(name, TarConstants.LF_LINK);
          entry.setLinkName(first);
        } else {
          entry = new TarArchiveEntry(name);
          entry.setSize((Long) attributes.get("size"));
          source = path;
        }
        entry.setMode(mode & 0777);
      }
      default -> {
        return null; // Sockets, fifos, devices: nothing a dependency cache needs.
      }
    }
    long seconds = ((FileTime) attributes.get("lastModifiedTime")).to(TimeUnit.SECONDS);
    entry.setLastModifiedTime(
        FileTime.from(Math.max(0, Math.min(seconds, TarConstants.MAXSIZE)), TimeUnit.SECONDS));
    return new Item(entry, source, null);
  }

  /**
   * Copies a regular file's data, exactly the size its entry says: bytes it grew by since are left
   * out; a file that shrank ends the keep.
   */
  private static void copy(Item item, OutputStream tar, byte[] buffer) throws IOException {
    try (InputStream in = Files.newInputStream(item.source(), LinkOption.NOFOLLOW_LINKS)) {
      long left = item.entry().getSize();
      while (left > 0) {
        int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
        if (n < 0) {
          throw new NotKept("/" + item.entry().getName() + " shrank while it was kept");
        }
        tar.write(buffer, 0, n);
        left -= n;
      }
    }
  }

  private static TarArchiveOutputStream tarStream(OutputStream out) {
    TarArchiveOutputStream tar = new TarArchiveOutputStream(out);
    tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
    tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
    return tar;
  }

  /**
   * The bytes {@code entry}'s header takes in the tar (one record, plus a PAX header for a long
   * name or link target or a big size): the tar stream's own, written to a counter. The stream
   * writes whole records as they fill, and is dropped with the entry open: it holds nothing else.
   */
  private static long headerBytes(TarArchiveEntry entry) throws IOException {
    CappedOutputStream counter = new CappedOutputStream(OutputStream.nullOutputStream(), -1);
    tarStream(counter).putArchiveEntry(entry);
    return counter.written;
  }

  private static long padded(long size) {
    return (size + RECORD - 1) / RECORD * RECORD;
  }

  /** Counts what passes; refuses the first byte past {@code cap} (none when negative). */
  private static final class CappedOutputStream extends FilterOutputStream {
    private final long cap;
    private long written;

    CappedOutputStream(OutputStream out, long cap) {
      super(out);
      this.cap = cap;
    }

    @Override
    public void write(int b) throws IOException {
      admit(1);
      out.write(b);
      written++;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      admit(len);
      out.write(b, off, len);
      written += len;
    }

    private void admit(int len) throws NotKept {
      if (cap >= 0 && written + len > cap) {
        throw new NotKept(
            "the cache paths changed while they were kept: more to write than the "
                + cap
                + " bytes counted");
      }
    }
  }
}
