package ai.spboucher.spbgit.runner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Whether the uid job containers run as ({@code SPB_SANDBOX_UID}) is safe on this host. Without a
 * user namespace the container's uid is the host's: were it a login account's, a process escaping a
 * job would be that person, with their files, keys and shell. An account that cannot log in
 * (nologin, false, ...) is fine: that is how an operator reserves the uid so that useradd never
 * hands it out.
 *
 * <p>{@link #refusal} is the decision, on passwd lines; {@link #hostAccounts} reads them from
 * {@code /etc/passwd} and from NSS ({@code getent passwd}, which also sees LDAP or sssd accounts).
 */
final class SandboxUidCheck {

  /**
   * Shells with which an account cannot log in; any other, an empty one ({@code /bin/sh}) too, is a
   * login shell.
   */
  private static final Set<String> NO_LOGIN_SHELLS =
      Set.of("nologin", "false", "true", "sync", "halt", "shutdown");

  /** One {@code passwd} entry, as much as the check needs. */
  record Account(String name, int uid, String shell) {

    /** Whether someone can log in as this account: its shell is a real one. */
    boolean canLogIn() {
      String program = shell.isEmpty() ? "/bin/sh" : shell;
      return !NO_LOGIN_SHELLS.contains(program.substring(program.lastIndexOf('/') + 1));
    }
  }

  private SandboxUidCheck() {}

  /** The entries of passwd-format {@code text}; comments, blank and malformed lines are skipped. */
  static List<Account> parsePasswd(String text) {
    List<Account> accounts = new ArrayList<>();
    for (String line : text.split("\n")) {
      String[] fields = line.split(":", -1);
      if (line.startsWith("#") || fields.length < 7 || !fields[2].matches("\\d{1,10}")) {
        continue;
      }
      long uid = Long.parseLong(fields[2]);
      if (uid <= Integer.MAX_VALUE) {
        accounts.add(new Account(fields[0], (int) uid, fields[6].strip()));
      }
    }
    return accounts;
  }

  /**
   * Why the runner must not start with {@code uid} among {@code accounts}, or empty when it may.
   */
  static Optional<String> refusal(int uid, List<Account> accounts) {
    if (uid == 0) {
      return Optional.of("SPB_SANDBOX_UID=0 is root: job containers must never run as root");
    }
    return accounts.stream()
        .filter(a -> a.uid() == uid && a.canLogIn())
        .findFirst()
        .map(
            a ->
                "SPB_SANDBOX_UID="
                    + uid
                    + " is the uid of the login account '"
                    + a.name()
                    + "' (shell "
                    + (a.shell().isEmpty() ? "/bin/sh" : a.shell())
                    + ") on this host, which a process escaping a job "
                    + "container would be: set SPB_SANDBOX_UID to a uid no login account has (default "
                    + RunnerConfig.DEFAULT_SANDBOX_UID
                    + ") and build the agent image with it (docs/sandbox.md)");
  }

  /**
   * The accounts of this host with {@code uid}: every {@code /etc/passwd} line (a uid may appear
   * twice) and what NSS answers. Blocking: reads a file and runs {@code getent}.
   */
  static List<Account> hostAccounts(int uid, Path passwd) throws IOException {
    List<Account> accounts = new ArrayList<>();
    try {
      accounts.addAll(parsePasswd(Files.readString(passwd, StandardCharsets.UTF_8)));
    } catch (NoSuchFileException e) {
      // A minimal host without one: NSS may still answer.
    }
    accounts.addAll(parsePasswd(getent(uid)));
    return accounts.stream().filter(a -> a.uid() == uid).toList();
  }

  /**
   * {@code getent passwd <uid>}'s answer; empty when there is none or no getent (exit 2: not
   * found).
   */
  private static String getent(int uid) throws IOException {
    Process process;
    try {
      process =
          new ProcessBuilder("getent", "passwd", Integer.toString(uid))
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
    } catch (IOException e) {
      return "";
    }
    try {
      // Waits before reading: a directory service that hangs must not hold the start-up for ever,
      // and one
      // line fits the pipe.
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException("getent passwd " + uid + " did not answer within 30 s");
      }
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return process.exitValue() == 0 ? out : "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running getent", e);
    }
  }
}
