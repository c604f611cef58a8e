package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SandboxUidCheckTest {

  private static final String PASSWD =
      """
      root:x:0:0:root:/root:/bin/bash
      daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
      sync:x:4:65534:sync:/bin:/bin/sync
      # a comment, then a blank line and a broken one

      broken:x:notanumber:1::/:/bin/sh
      alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash
      svc:x:997:997::/var/lib/svc:/bin/false
      legacy:x:1001:1001::/home/legacy:
      spb-sandbox:x:2000000000:2000000000::/nonexistent:/usr/sbin/nologin
      nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
      """;
  private static final List<SandboxUidCheck.Account> ACCOUNTS = SandboxUidCheck.parsePasswd(PASSWD);

  @Test
  void parsesEveryWellFormedEntry() {
    assertEquals(
        List.of("root", "daemon", "sync", "alice", "svc", "legacy", "spb-sandbox", "nobody"),
        ACCOUNTS.stream().map(SandboxUidCheck.Account::name).toList());
    assertEquals(new SandboxUidCheck.Account("alice", 1000, "/bin/bash"), ACCOUNTS.get(3));
  }

  @Test
  void refusesTheUidOfALoginAccountNamingItAndTheSetting() {
    Optional<String> refusal = SandboxUidCheck.refusal(1000, ACCOUNTS);
    assertTrue(refusal.isPresent());
    assertEquals(
        "SPB_SANDBOX_UID=1000 is the uid of the login account 'alice' (shell /bin/bash) on this host, "
            + "which a process escaping a job container would be: set SPB_SANDBOX_UID to a uid no login account has "
            + "(default 2000000000) and build the agent image with it (docs/sandbox.md)",
        refusal.get());
  }

  @Test
  void takesAnEmptyShellForTheDefaultShellWhichCanLogIn() {
    assertTrue(
        SandboxUidCheck.refusal(1001, ACCOUNTS).orElseThrow().contains("'legacy' (shell /bin/sh)"));
  }

  @Test
  void refusesRootWhateverThePasswdFileSays() {
    assertEquals(
        Optional.of("SPB_SANDBOX_UID=0 is root: job containers must never run as root"),
        SandboxUidCheck.refusal(0, List.of()));
  }

  @Test
  void acceptsAUidNoAccountHasOrOneReservedByAnAccountThatCannotLogIn() {
    assertEquals(Optional.empty(), SandboxUidCheck.refusal(1_500_000_000, ACCOUNTS), "no account");
    assertEquals(
        Optional.empty(), SandboxUidCheck.refusal(2_000_000_000, ACCOUNTS), "nologin reserves it");
    assertEquals(Optional.empty(), SandboxUidCheck.refusal(997, ACCOUNTS), "/bin/false");
    assertEquals(Optional.empty(), SandboxUidCheck.refusal(4, ACCOUNTS), "/bin/sync");
  }

  @Test
  void refusesWhenAnyOfTwoAccountsSharingTheUidCanLogIn() {
    List<SandboxUidCheck.Account> shared =
        SandboxUidCheck.parsePasswd(
            """
        reserved:x:70000:70000::/nonexistent:/usr/sbin/nologin
        bob:x:70000:70000::/home/bob:/usr/bin/zsh
        """);
    assertTrue(
        SandboxUidCheck.refusal(70_000, shared)
            .orElseThrow()
            .contains("'bob' (shell /usr/bin/zsh)"));
  }
}
