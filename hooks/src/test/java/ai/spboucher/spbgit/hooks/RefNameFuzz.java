package ai.spboucher.spbgit.hooks;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Generators of ref names for fuzz tests: arbitrary strings built from the fragments that matter to
 * git's rules and to the agent namespace, byte-level mutations of valid names, names aimed at one
 * job's scope, and names that are valid by construction (so a validator that refuses everything
 * fails the tests).
 */
public final class RefNameFuzz {

  /**
   * Characters that look like {@code /}, {@code .} or ASCII letters, or that vanish when rendered.
   */
  static final List<String> LOOK_ALIKES =
      List.of(
          "\u2215",
          "\u2044",
          "\uff0f",
          "\u29f8",
          "\u2024",
          "\uff0e",
          "\u3002",
          "\u0430",
          "\u0435",
          "\u043e",
          "\u0410",
          "\u212a",
          "\u0131",
          "\u0130",
          "\u017f",
          "\u00a0",
          "\u200b",
          "\u200d",
          "\u2060",
          "\ufeff",
          "\u202e",
          "\u0338",
          "\u00e9",
          "e\u0301",
          "\ud83d\ude00",
          "\ufffd");

  private static final List<String> FRAGMENTS =
      List.of(
          "refs",
          "agents",
          "heads",
          "tags",
          "notes",
          "HEAD",
          "main",
          "proposal",
          "x",
          "a.b",
          "-",
          "_",
          "0",
          "/",
          "//",
          "///",
          ".",
          "..",
          "...",
          "./",
          "/.",
          "../",
          "@",
          "@{",
          "{",
          "}",
          "@{1}",
          "@{-1}",
          "~",
          "~1",
          "^",
          "^{}",
          ":",
          "?",
          "*",
          "[",
          "]",
          "\\",
          " ",
          "\t",
          "\n",
          "\r",
          "\0",
          "\u0001",
          "\u001b",
          "\u001f",
          "\u007f",
          ".lock",
          "lock",
          ".lock/",
          ".git",
          "%2e",
          "%2f",
          "%00",
          "'",
          "\"",
          "$",
          ";",
          "|",
          "#",
          "=",
          ",",
          "+",
          "!",
          "&");

  private static final List<String> VALID_SEEDS =
      List.of(
          "refs/heads/main",
          "refs/agents/JOB/proposal",
          "refs/agents/JOB/x/y",
          "refs/agents/JOB/feature-1.2",
          "refs/tags/v1.0",
          "refs/heads/\u00e9t\u00e9",
          "refs/agents/JOB/a",
          "refs/notes/commits");

  private static final byte[] INTERESTING_BYTES = {
    '/',
    '.',
    '@',
    '{',
    '}',
    '~',
    '^',
    ':',
    '?',
    '*',
    '[',
    '\\',
    ' ',
    0x00,
    0x01,
    0x0a,
    0x1f,
    0x7f,
    (byte) 0x80,
    (byte) 0xbf,
    (byte) 0xc0,
    (byte) 0xc3,
    (byte) 0xe2,
    (byte) 0xf0,
    (byte) 0xff,
    'A',
    'z',
    '-'
  };

  private static final String SAFE =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

  private RefNameFuzz() {}

  /**
   * A valid job id: {@link RefScope#JOB_ID}, often short so prefixes and extensions of it are
   * close.
   */
  public static String jobId(Random random) {
    String first = "abcdefghijklmnopqrstuvwxyz0123456789";
    String rest = first + "-";
    int length = random.nextInt(4) == 0 ? 1 + random.nextInt(64) : 1 + random.nextInt(6);
    StringBuilder id = new StringBuilder().append(first.charAt(random.nextInt(first.length())));
    for (int i = 1; i < length; i++) {
      id.append(rest.charAt(random.nextInt(rest.length())));
    }
    return id.toString();
  }

  /** A string of 0 to 30 fragments, sometimes behind a {@code refs/} prefix. */
  public static String arbitrary(Random random) {
    StringBuilder name =
        new StringBuilder(
            switch (random.nextInt(4)) {
              case 0 -> "";
              case 1 -> "refs/";
              case 2 -> "refs/heads/";
              default -> "refs/agents/";
            });
    int count = random.nextInt(31);
    for (int i = 0; i < count; i++) {
      name.append(fragment(random, "x"));
    }
    return name.toString();
  }

  /**
   * A name aimed at {@code job}'s scope: its prefix, bent by traversal, look-alikes, case and bad
   * bytes.
   */
  public static String aimedAt(Random random, String job) {
    String prefix =
        switch (random.nextInt(12)) {
          case 0 -> "refs/agents/" + job;
          case 1 -> "refs/agents/" + job + "/";
          case 2 -> "refs/agents/" + job + "x/";
          case 3 -> "refs/agents/" + job.substring(0, Math.max(1, job.length() - 1)) + "/";
          case 4 -> "refs/agents/" + job.toUpperCase(Locale.ROOT) + "/";
          case 5 -> "refs/Agents/" + job + "/";
          case 6 -> "refs/agents/" + job + "/../";
          case 7 -> "refs/agents//" + job + "/";
          case 8 -> "refs/agents/" + lookAlike(random, job) + "/";
          case 9 -> "refs/agents" + LOOK_ALIKES.get(random.nextInt(3)) + job + "/";
          case 10 -> "./refs/agents/" + job + "/";
          default -> "refs/agents/" + job + "/" + fragment(random, job);
        };
    StringBuilder name = new StringBuilder(prefix);
    int count = random.nextInt(6);
    for (int i = 0; i < count; i++) {
      name.append(fragment(random, job));
    }
    return name.toString();
  }

  /**
   * A valid ref name, with 1 to 4 byte-level mutations of its UTF-8 form, decoded back as a wire
   * reader might.
   */
  public static String mutated(Random random, String job) {
    byte[] bytes = valid(random, job).getBytes(StandardCharsets.UTF_8);
    int mutations = 1 + random.nextInt(4);
    for (int i = 0; i < mutations; i++) {
      bytes = mutate(random, bytes);
    }
    // JGit decodes pkt-line text as UTF-8 and falls back to ISO-8859-1 when it is not.
    return new String(
        bytes, random.nextBoolean() ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1);
  }

  /** A ref name git accepts, from the seeds or built of safe components. */
  public static String valid(Random random, String job) {
    if (random.nextBoolean()) {
      return VALID_SEEDS.get(random.nextInt(VALID_SEEDS.size())).replace("JOB", job);
    }
    return "refs/" + validSuffix(random);
  }

  /** One to five components git accepts, joined by single slashes, e.g. {@code a/b.c/\u00e9}. */
  public static String validSuffix(Random random) {
    int components = 1 + random.nextInt(5);
    StringBuilder suffix = new StringBuilder();
    for (int c = 0; c < components; c++) {
      if (c > 0) {
        suffix.append('/');
      }
      int length = 1 + random.nextInt(12);
      for (int i = 0; i < length; i++) {
        boolean interior = i > 0 && i < length - 1;
        int kind = random.nextInt(20);
        if (kind == 0 && interior && suffix.charAt(suffix.length() - 1) != '.') {
          suffix.append('.');
        } else if (kind == 1) {
          suffix.append("\u00e9");
        } else if (kind == 2 && interior) {
          suffix.append('@');
        } else {
          suffix.append(SAFE.charAt(random.nextInt(SAFE.length())));
        }
      }
      if (suffix.toString().endsWith(".lock")) {
        suffix.append('x');
      }
    }
    return suffix.toString();
  }

  private static String fragment(Random random, String job) {
    return switch (random.nextInt(10)) {
      case 0, 1, 2, 3 -> FRAGMENTS.get(random.nextInt(FRAGMENTS.size()));
      case 4 -> LOOK_ALIKES.get(random.nextInt(LOOK_ALIKES.size()));
      case 5 -> job;
      case 6 -> String.valueOf((char) random.nextInt(0x80));
      case 7 -> String.valueOf((char) random.nextInt(0x10000));
      default -> String.valueOf(SAFE.charAt(random.nextInt(SAFE.length())));
    };
  }

  private static String lookAlike(Random random, String job) {
    int at = random.nextInt(job.length());
    String replacement =
        switch (job.charAt(at)) {
          case 'a' -> "\u0430";
          case 'e' -> "\u0435";
          case 'o' -> "\u043e";
          case 'i' -> "\u0131";
          case 'k' -> "\u212a";
          case 's' -> "\u017f";
          default -> LOOK_ALIKES.get(random.nextInt(LOOK_ALIKES.size()));
        };
    return job.substring(0, at) + replacement + job.substring(at + 1);
  }

  private static byte[] mutate(Random random, byte[] bytes) {
    int at = bytes.length == 0 ? 0 : random.nextInt(bytes.length);
    byte interesting = INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)];
    switch (random.nextInt(8)) {
      case 0 -> {
        if (bytes.length > 0) {
          bytes[at] ^= (byte) (1 << random.nextInt(8));
        }
      }
      case 1 -> {
        if (bytes.length > 0) {
          bytes[at] = interesting;
        }
      }
      case 2 -> bytes = splice(bytes, at, 0, new byte[] {interesting});
      case 3 -> bytes = bytes.length == 0 ? bytes : splice(bytes, at, 1, new byte[0]);
      case 4 -> bytes = splice(bytes, bytes.length, 0, ".lock".getBytes(StandardCharsets.US_ASCII));
      case 5 -> bytes = Arrays.copyOf(bytes, at);
      case 6 ->
          bytes =
              splice(
                  bytes,
                  at,
                  0,
                  FRAGMENTS.get(random.nextInt(FRAGMENTS.size())).getBytes(StandardCharsets.UTF_8));
      default ->
          bytes =
              splice(
                  bytes,
                  at,
                  0,
                  Arrays.copyOfRange(
                      bytes, at, Math.min(bytes.length, at + 1 + random.nextInt(4))));
    }
    return bytes;
  }

  private static byte[] splice(byte[] bytes, int at, int remove, byte[] insert) {
    byte[] out = new byte[bytes.length - remove + insert.length];
    System.arraycopy(bytes, 0, out, 0, at);
    System.arraycopy(insert, 0, out, at, insert.length);
    System.arraycopy(bytes, at + remove, out, at + insert.length, bytes.length - at - remove);
    return out;
  }
}
