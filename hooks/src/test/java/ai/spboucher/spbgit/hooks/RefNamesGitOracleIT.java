package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A sample of generated ref names judged by the real {@code git check-ref-format}: {@link RefNames}
 * never accepts a name git refuses, refuses a name git accepts only for a documented stricter rule,
 * and the tests' own model of git's rules ({@link GitRefFormat}) agrees with git on every name.
 */
class RefNamesGitOracleIT {

  private static final int SAMPLE = 400;

  /**
   * Where RefNames is stricter than git on purpose (docs/hooks.md): pushes only ever name full
   * refs.
   */
  private static final List<String> STRICTER_RULES =
      List.of("ref name does not start with refs/", "ref name longer than 1024 characters");

  @Test
  void refNamesIsNeverLaxerThanGit() throws Exception {
    long seed = Fuzz.seed();
    int tries = Fuzz.tries(SAMPLE);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < tries; i++) {
      String name = sample(Fuzz.randomFor(seed, i), i);
      if (name.indexOf('\0') >= 0 || name.startsWith("-")) {
        // A command line cannot carry NUL, and git check-ref-format takes a leading '-' for an
        // option, so git
        // cannot judge these; RefNames must refuse them on its own (they do not start with refs/).
        assertTrue(RefNames.problemWith(name).isPresent(), Fuzz.show(name));
      } else {
        names.add(name);
      }
    }
    List<Boolean> gitVerdicts = gitAccepts(names);

    List<String> laxer = new ArrayList<>();
    List<String> undocumentedStricter = new ArrayList<>();
    List<String> modelDisagrees = new ArrayList<>();
    int accepted = 0;
    for (int i = 0; i < names.size(); i++) {
      String name = names.get(i);
      boolean git = gitVerdicts.get(i);
      Optional<String> ours = RefNames.problemWith(name);
      accepted += git ? 1 : 0;
      if (ours.isEmpty() && !git) {
        laxer.add(Fuzz.show(name));
      }
      if (ours.isPresent() && git && !STRICTER_RULES.contains(ours.get())) {
        undocumentedStricter.add(Fuzz.show(name) + " (" + ours.get() + ")");
      }
      if (GitRefFormat.accepts(name) != git) {
        modelDisagrees.add(Fuzz.show(name) + (git ? " git accepts" : " git refuses"));
      }
    }
    String replay = " (replay: -D" + Fuzz.SEED + "=" + seed + ")";
    assertEquals(List.of(), laxer, "RefNames accepts names git check-ref-format refuses" + replay);
    assertEquals(
        List.of(),
        undocumentedStricter,
        "RefNames refuses names git accepts, for no documented rule" + replay);
    assertEquals(List.of(), modelDisagrees, "GitRefFormat disagrees with git" + replay);
    assertTrue(
        accepted >= names.size() / 5,
        "the sample holds too few valid names to mean anything: " + accepted);
  }

  /** A quarter each: arbitrary, mutated, aimed at a job, valid by construction. */
  private static String sample(Random random, int index) {
    String job = RefNameFuzz.jobId(random);
    return switch (index % 4) {
      case 0 -> RefNameFuzz.arbitrary(random);
      case 1 -> RefNameFuzz.mutated(random, job);
      case 2 -> RefNameFuzz.aimedAt(random, job);
      default -> RefNameFuzz.valid(random, job);
    };
  }

  /**
   * git's verdict on each name, from one shell that runs {@code git check-ref-format} per name: the
   * names go in NUL-separated on standard input, so their UTF-8 bytes reach git exactly, and no JVM
   * process start per name.
   */
  private static List<Boolean> gitAccepts(List<String> names)
      throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder(
                "bash",
                "-c",
                "while IFS= read -r -d '' name; do if git check-ref-format \"$name\"; then echo y; else echo n; fi; done")
            .redirectError(ProcessBuilder.Redirect.INHERIT);
    Process process = builder.start();
    ByteArrayOutputStream input = new ByteArrayOutputStream();
    for (String name : names) {
      input.writeBytes(name.getBytes(StandardCharsets.UTF_8));
      input.write(0);
    }
    // Written from another thread: the answers fill the pipe while the names are still going in.
    Thread writer =
        new Thread(
            () -> {
              try (var stdin = process.getOutputStream()) {
                stdin.write(input.toByteArray());
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
            });
    writer.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    writer.join();
    assertTrue(process.waitFor(60, TimeUnit.SECONDS), "git check-ref-format did not finish");
    List<Boolean> verdicts = output.lines().map("y"::equals).toList();
    assertEquals(names.size(), verdicts.size(), "one verdict per name");
    return verdicts;
  }
}
