package ai.spboucher.spbgit.builtinagent.tools;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The file tools: list, read, search, write, replace. Every path goes through {@link Workspace}.
 */
final class FileTools {
  static final int READ_CAP = 64 * 1024;
  static final int DEFAULT_READ_LINES = 2000;
  static final int LIST_CAP = 500;
  static final int LIST_DEPTH = 20;
  static final int SEARCH_MATCHES = 100;
  static final long SEARCH_FILE_CAP = 1024 * 1024;
  static final int SEARCH_LINE_CHARS = 200;
  static final int WRITE_CAP = 1024 * 1024;
  static final long REPLACE_FILE_CAP = 4L * 1024 * 1024;
  private static final int BINARY_PROBE = 8192;

  private final Workspace workspace;
  private final Duration searchTime;

  FileTools(Workspace workspace, Duration searchTime) {
    this.workspace = workspace;
    this.searchTime = searchTime;
  }

  ToolResult list(String path) throws IOException, PathRefusedException {
    Path start = workspace.existing(path);
    List<String> entries = new ArrayList<>();
    int[] more = {0};
    if (Files.isDirectory(start)) {
      walk(start, 0, entries, more);
    } else {
      entries.add(workspace.relative(start));
    }
    StringBuilder out = new StringBuilder(String.join("\n", entries));
    if (entries.isEmpty()) {
      out.append("(empty directory)");
    }
    if (more[0] > 0) {
      out.append("\n[listing stopped at ")
          .append(LIST_CAP)
          .append(" entries; ")
          .append(more[0])
          .append(" more not shown: list a subdirectory]");
    }
    return ToolResult.ok(
        out.toString(), entries.size() == 1 ? "1 entry" : entries.size() + " entries");
  }

  /** Sorted, depth first, without following symlinks, hiding .git and .spb. */
  private void walk(Path dir, int depth, List<String> entries, int[] more) throws IOException {
    for (Path child : visibleChildren(dir)) {
      if (entries.size() >= LIST_CAP) {
        more[0]++;
        continue;
      }
      String name = workspace.relative(child);
      if (Files.isSymbolicLink(child)) {
        entries.add(name + " -> " + Files.readSymbolicLink(child));
      } else if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
        entries.add(name + "/");
        if (depth + 1 < LIST_DEPTH) {
          walk(child, depth + 1, entries, more);
        }
      } else {
        entries.add(name);
      }
    }
  }

  ToolResult read(String path, int offset, int limit) throws IOException, PathRefusedException {
    Path file = regularFile(path);
    if (offset < 1) {
      return ToolResult.failed("offset is the first line to read, counted from 1");
    }
    if (limit < 1) {
      return ToolResult.failed("limit must be at least 1");
    }
    if (binary(file)) {
      return ToolResult.failed(
          path + " is a binary file (" + Sizes.human(Files.size(file)) + "): not shown");
    }
    StringBuilder out = new StringBuilder();
    int total = 0;
    int last = offset - 1;
    int used = 0;
    boolean full = false;
    try (BufferedReader reader = reader(file)) {
      for (String line; (line = reader.readLine()) != null; ) {
        total++;
        if (total < offset || full || total >= offset + limit) {
          continue;
        }
        int room = READ_CAP - used;
        if (utf8Length(line) + 1 > room) {
          full = true;
          if (total == offset) {
            out.append(line, 0, Math.min(line.length(), room / 4))
                .append("[... line cut at the read cap]\n");
            last = total;
          }
          continue;
        }
        out.append(line).append('\n');
        used += utf8Length(line) + 1;
        last = total;
      }
    }
    if (total == 0) {
      return ToolResult.ok("(empty file)", "empty");
    }
    if (offset > total) {
      return ToolResult.failed(
          path + " has " + total + " lines; offset " + offset + " is past the end");
    }
    if (offset > 1 || last < total) {
      out.append("[lines ").append(offset).append('-').append(last).append(" of ").append(total);
      out.append(last < total ? "; continue with offset=" + (last + 1) + "]" : "]");
    }
    return ToolResult.ok(out.toString(), Sizes.human(utf8Length(out)));
  }

  ToolResult search(String regex, String path) throws IOException, PathRefusedException {
    Pattern pattern;
    try {
      pattern = Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      return ToolResult.failed("invalid regular expression: " + e.getDescription());
    }
    Path start = workspace.existing(path);
    List<Path> files = new ArrayList<>();
    collectFiles(start, 0, files);
    long deadline = System.nanoTime() + searchTime.toNanos();
    StringBuilder out = new StringBuilder();
    int matches = 0;
    int searched = 0;
    String stopped = null;
    search:
    for (Path file : files) {
      if (Files.size(file) > SEARCH_FILE_CAP || binary(file)) {
        continue;
      }
      searched++;
      try (BufferedReader reader = reader(file)) {
        int number = 0;
        for (String line; (line = reader.readLine()) != null; ) {
          number++;
          if (System.nanoTime() > deadline) {
            throw new DeadlineChars.Expired();
          }
          Matcher matcher = pattern.matcher(new DeadlineChars(line, deadline));
          if (matcher.find()) {
            if (matches == SEARCH_MATCHES) {
              stopped = "stopped at " + SEARCH_MATCHES + " matches: narrow the pattern or the path";
              break search;
            }
            matches++;
            String shown = line.strip();
            if (shown.length() > SEARCH_LINE_CHARS) {
              shown = shown.substring(0, SEARCH_LINE_CHARS) + "…";
            }
            out.append(workspace.relative(file))
                .append(':')
                .append(number)
                .append(": ")
                .append(shown)
                .append('\n');
          }
        }
      } catch (DeadlineChars.Expired e) {
        stopped = "stopped after " + searchTime.toSeconds() + " s: the pattern is too slow";
        break;
      }
    }
    if (matches == 0 && stopped == null) {
      return ToolResult.ok("no matches in " + searched + " text files", "0 matches");
    }
    if (stopped != null) {
      out.append('[').append(stopped).append(']');
    }
    return ToolResult.ok(out.toString(), matches + " matches");
  }

  private void collectFiles(Path path, int depth, List<Path> files) throws IOException {
    if (Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
      files.add(path);
      return;
    }
    if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) || depth >= LIST_DEPTH) {
      return;
    }
    for (Path child : visibleChildren(path)) {
      collectFiles(child, depth + 1, files);
    }
  }

  /** The entries of {@code dir} but .git and .spb, sorted. */
  private static List<Path> visibleChildren(Path dir) throws IOException {
    List<Path> children = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
      for (Path child : stream) {
        if (!Workspace.hidden(child.getFileName().toString())) {
          children.add(child);
        }
      }
    }
    children.sort(null);
    return children;
  }

  ToolResult write(String path, String content) throws IOException, PathRefusedException {
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    if (bytes.length > WRITE_CAP) {
      return ToolResult.failed(
          "content is "
              + Sizes.human(bytes.length)
              + "; write_file takes at most "
              + Sizes.human(WRITE_CAP));
    }
    Path target = workspace.forWrite(path);
    if (Files.isDirectory(target)) {
      return ToolResult.failed(path + " is a directory");
    }
    boolean created = !Files.exists(target);
    Files.createDirectories(target.getParent());
    writeNoFollow(target, bytes);
    String verb = created ? "created" : "overwrote";
    return ToolResult.ok(
        verb + " " + path + " (" + bytes.length + " bytes)",
        verb + " " + Sizes.human(bytes.length));
  }

  ToolResult replace(String path, String old, String replacement)
      throws IOException, PathRefusedException {
    if (old.isEmpty()) {
      return ToolResult.failed("old must not be empty");
    }
    Path file = regularFile(path);
    if (Files.size(file) > REPLACE_FILE_CAP) {
      return ToolResult.failed(
          path + " is larger than " + Sizes.human(REPLACE_FILE_CAP) + ": use run_command");
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(Files.readAllBytes(file)))
              .toString();
    } catch (CharacterCodingException e) {
      return ToolResult.failed(path + " is not valid UTF-8: use write_file or run_command");
    }
    int first = text.indexOf(old);
    if (first < 0) {
      return ToolResult.failed(
          "old text not found in "
              + path
              + ": read the file again and copy the text exactly, whitespace included");
    }
    int count = 0;
    for (int at = first; at >= 0; at = text.indexOf(old, at + old.length())) {
      count++;
    }
    if (count > 1) {
      return ToolResult.failed(
          "old text occurs "
              + count
              + " times in "
              + path
              + ": include more surrounding lines so that it occurs exactly once");
    }
    String updated = text.substring(0, first) + replacement + text.substring(first + old.length());
    writeNoFollow(file, updated.getBytes(StandardCharsets.UTF_8));
    int line = 1 + (int) text.substring(0, first).chars().filter(c -> c == '\n').count();
    return ToolResult.ok("replaced 1 occurrence in " + path + " at line " + line, "line " + line);
  }

  private Path regularFile(String path) throws IOException, PathRefusedException {
    Path file = workspace.existing(path);
    if (!Files.isRegularFile(file)) {
      throw new PathRefusedException(
          path + " is not a regular file" + (Files.isDirectory(file) ? " (a directory)" : ""));
    }
    return file;
  }

  /** The target was resolved to its real path, so the last component must not be a symlink now. */
  private static void writeNoFollow(Path target, byte[] bytes) throws IOException {
    Files.write(
        target,
        bytes,
        StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING,
        StandardOpenOption.WRITE,
        LinkOption.NOFOLLOW_LINKS);
  }

  private static boolean binary(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] head = in.readNBytes(BINARY_PROBE);
      for (byte b : head) {
        if (b == 0) {
          return true;
        }
      }
      return false;
    }
  }

  /** UTF-8 with malformed bytes replaced, so any text file can be read. */
  private static BufferedReader reader(Path file) throws IOException {
    return new BufferedReader(
        new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8));
  }

  private static int utf8Length(CharSequence text) {
    int bytes = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
    }
    return bytes;
  }

  /** Lets a regex search be abandoned: catastrophic backtracking keeps calling charAt. */
  private static final class DeadlineChars implements CharSequence {
    static final class Expired extends RuntimeException {
      private static final long serialVersionUID = 1L;

      Expired() {
        super(null, null, false, false);
      }
    }

    private final CharSequence text;
    private final long deadline;
    private int calls;

    DeadlineChars(CharSequence text, long deadline) {
      this.text = text;
      this.deadline = deadline;
    }

    @Override
    public char charAt(int index) {
      if ((++calls & 0xFFF) == 0 && System.nanoTime() > deadline) {
        throw new Expired();
      }
      return text.charAt(index);
    }

    @Override
    public int length() {
      return text.length();
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new DeadlineChars(text.subSequence(start, end), deadline);
    }

    @Override
    public String toString() {
      return text.toString();
    }
  }
}
