package ai.spboucher.spbgit.runner.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EgressPolicyTest {

  @Test
  void admitsListedHostAndPortIgnoringHostCase() {
    EgressPolicy policy = EgressPolicy.of("Repo.Example.org:443", "10.0.0.7:8080");
    assertTrue(policy.admits("repo.example.org", 443));
    assertTrue(policy.admits("REPO.EXAMPLE.ORG", 443));
    assertTrue(policy.admits("10.0.0.7", 8080));
    assertEquals(List.of("repo.example.org:443", "10.0.0.7:8080"), policy.entries());
  }

  @Test
  void refusesSameHostOnAnotherPortAndOtherHosts() {
    EgressPolicy policy = EgressPolicy.of("repo.example.org:443");
    assertFalse(policy.admits("repo.example.org", 80));
    assertFalse(policy.admits("repo.example.org", 4430));
    assertFalse(policy.admits("example.org", 443));
    assertFalse(policy.admits("evil-repo.example.org", 443));
    assertFalse(policy.admits("repo.example.org.", 443));
    assertFalse(policy.admits("repo.example.org.evil.net", 443));
  }

  @Test
  void namesAndAddressesAreDifferentEntries() {
    EgressPolicy loopback = EgressPolicy.of("127.0.0.1:8080");
    assertTrue(loopback.admits("127.0.0.1", 8080));
    assertFalse(loopback.admits("localhost", 8080));
    EgressPolicy localhost = EgressPolicy.of("localhost:8080");
    assertTrue(localhost.admits("LocalHost", 8080));
    assertFalse(localhost.admits("127.0.0.1", 8080));
    assertFalse(localhost.admits("[::1]", 8080));
  }

  @Test
  void ipv6LiteralsMatchByAddress() {
    EgressPolicy policy = EgressPolicy.of("[::1]:8080", "[2001:DB8::1]:443");
    assertTrue(policy.admits("[0:0:0:0:0:0:0:1]", 8080));
    assertTrue(policy.admits("::1", 8080));
    assertTrue(policy.admits("[2001:db8:0::1]", 443));
    assertFalse(policy.admits("[::2]", 8080));
    assertFalse(policy.admits("[::1]", 443));
    assertEquals(List.of("[0:0:0:0:0:0:0:1]:8080", "[2001:db8:0:0:0:0:0:1]:443"), policy.entries());
  }

  @Test
  void wildcardAdmitsSubdomainsOnTheListedPortOnly() {
    EgressPolicy policy = EgressPolicy.of("*.example.org:443");
    assertTrue(policy.admits("a.example.org", 443));
    assertTrue(policy.admits("a.b.Example.org", 443));
    assertFalse(policy.admits("example.org", 443));
    assertFalse(policy.admits("badexample.org", 443));
    assertFalse(policy.admits("a.example.org", 80));
    assertFalse(policy.admits("a.example.org.evil.net", 443));
    assertEquals(List.of("*.example.org:443"), policy.entries());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "host",
        "host:0",
        "host:99999",
        ":80",
        "a b:80",
        "host:",
        "host:80:90",
        "host:+80",
        "host:080",
        "host:8o",
        "-a.org:80",
        "a-.org:80",
        "a..b:80",
        ".a.org:80",
        "a.org.:80",
        "1.2.3:80",
        "256.1.1.1:80",
        "01.2.3.4:80",
        "1.2.3.4.5:80",
        "[::1]",
        "[::1:80",
        "::1:80",
        "[fe80::1%eth0]:80",
        "[::ffff:127.0.0.1]:80",
        "[1.2.3.4]:80",
        "[::g]:80",
        "*:80",
        "*.com:443",
        "*.1.2.3.4:80",
        "a.*.org:80",
        "**.a.org:80",
        "exa_mple.org:80",
        "http://x.org:80",
        "x.org:80/",
        "user@x.org:80",
        "x.org :80",
        " x.org:80",
        "\u212Aa.org:80",
        "",
        "[]:80"
      })
  void rejectsJunkNamingTheEntry(String entry) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> EgressPolicy.of(entry));
    assertTrue(e.getMessage().contains("'" + entry + "'"), e.getMessage());
  }

  @Test
  void rejectsNullEntryAndLongLabels() {
    assertThrows(IllegalArgumentException.class, () -> EgressPolicy.of((String) null));
    assertThrows(IllegalArgumentException.class, () -> EgressPolicy.of("a".repeat(64) + ".org:80"));
    EgressPolicy.of("a".repeat(63) + ".org:80");
  }

  @Test
  void parsesAListWrittenInOneString() {
    EgressPolicy policy = EgressPolicy.parse(" a.org:443,b.org:80\n c.org:22 ,, a.org:443 ");
    assertEquals(List.of("a.org:443", "b.org:80", "c.org:22"), policy.entries());
    assertTrue(EgressPolicy.parse("  ").isEmpty());
  }

  @Test
  void denyAllAdmitsNothing() {
    assertFalse(EgressPolicy.denyAll().admits("localhost", 80));
    assertTrue(EgressPolicy.denyAll().entries().isEmpty());
  }

  @Test
  void invalidQueriesAreSimplyNotAdmitted() {
    EgressPolicy policy = EgressPolicy.of("a.org:443");
    assertFalse(policy.admits(null, 443));
    assertFalse(policy.admits("a.org", 0));
    assertFalse(policy.admits("a.org", 70000));
    assertFalse(policy.admits("a .org", 443));
    assertFalse(policy.admits("", 443));
  }
}
