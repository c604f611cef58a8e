package ai.spboucher.spbgit.builtinagent;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The runner's warning that it is about to stop the job: a file (by default {@code
 * /work/.spb/breach}) holding {@code timeout} or {@code budget_exceeded}. Checked before every step
 * and while waiting.
 */
public final class BreachSignal {
  private final Path file;

  public BreachSignal(Path file) {
    this.file = file;
  }

  /**
   * The reason written by the runner (only {@code [a-z_]}, at most 32 characters), if the file
   * exists.
   */
  public Optional<String> reason() {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    byte[] head;
    try (InputStream in = Files.newInputStream(file)) {
      head = in.readNBytes(32);
    } catch (IOException e) {
      head = new byte[0];
    }
    String word = new String(head, StandardCharsets.US_ASCII).replaceAll("[^a-z_]", "");
    return Optional.of(word.isEmpty() ? "breach" : word);
  }
}
