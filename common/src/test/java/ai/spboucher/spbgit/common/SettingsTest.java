package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsTest {

  @Test
  void unsetVariablesTakeTheirDefaults() {
    Settings none = Settings.of(Map.of());
    assertEquals("d", none.text("A", "d"));
    assertEquals(7, none.integer("A", 7));
    assertEquals(7L, none.wholeNumber("A", 7));
    assertEquals(1.5, none.decimal("A", 1.5));
    assertEquals(64L << 10, none.size("A", 64L << 10));
    assertEquals(Duration.ofMinutes(3), none.duration("A", Duration.ofMinutes(3)));
    assertTrue(none.flag("A", true));
    assertEquals(List.of(), none.list("A"));
    assertNull(none.path("A", null));
    assertFalse(none.isSet("A"));
  }

  @Test
  void readsEachTypeStrippedOfWhiteSpace() {
    Settings s =
        Settings.of(
            Map.of(
                "N",
                " 42 ",
                "S",
                "2g",
                "D",
                "90s",
                "F",
                "Yes",
                "L",
                "a, b c,,d",
                "P",
                " /srv/x ",
                "X",
                "1.25"));
    assertEquals(42, s.integer("N", 0));
    assertEquals(2L << 30, s.size("S", 0));
    assertEquals(Duration.ofSeconds(90), s.duration("D", Duration.ZERO));
    assertTrue(s.flag("F", false));
    assertEquals(List.of("a", "b", "c", "d"), s.list("L"));
    assertEquals(Path.of("/srv/x"), s.path("P", null));
    assertEquals(1.25, s.decimal("X", 0));
    assertEquals(" 42 ", s.verbatim("N", null), "verbatim keeps white space");
  }

  @Test
  void emptyMeansUnsetOrAValueAsTheFactorySays() {
    Map<String, String> env = Map.of("A", "", "B", "  ");
    assertEquals(5, Settings.of(env).integer("A", 5));
    assertEquals("d", Settings.of(env).text("B", "d"));
    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class, () -> Settings.keepingEmpty(env).integer("A", 5));
    assertEquals("A: not a whole number: ''", refused.getMessage());
    assertEquals("", Settings.keepingEmpty(env).text("B", "d"));
    assertTrue(Settings.keepingEmpty(env).nonBlank("B").isEmpty());
    assertNull(Settings.keepingEmpty(env).path("B", null), "a blank path is no path");
  }

  @Test
  void aValueThatDoesNotParseIsRefusedWithTheVariablesName() {
    Settings s =
        Settings.of(
            Map.of(
                "SPB_SLOTS", "many",
                "SPB_CAP", "12q",
                "SPB_WAIT", "5y",
                "SPB_FLAG", "maybe",
                "SPB_CPUS", "lots",
                "SPB_BIG", "2147483648"));
    assertEquals(
        "SPB_SLOTS: not a whole number: 'many'",
        assertThrows(IllegalArgumentException.class, () -> s.integer("SPB_SLOTS", 1)).getMessage());
    assertEquals(
        "SPB_BIG: not a whole number: '2147483648'",
        assertThrows(IllegalArgumentException.class, () -> s.integer("SPB_BIG", 1)).getMessage());
    assertEquals(2147483648L, s.wholeNumber("SPB_BIG", 1));
    assertEquals(
        "SPB_CAP: not a number: '12q'",
        assertThrows(IllegalArgumentException.class, () -> s.size("SPB_CAP", 1)).getMessage());
    assertEquals(
        "SPB_WAIT: unknown unit in duration '5y' (use s, m, h or d)",
        assertThrows(IllegalArgumentException.class, () -> s.duration("SPB_WAIT", Duration.ZERO))
            .getMessage());
    assertEquals(
        "SPB_FLAG: not true or false: 'maybe'",
        assertThrows(IllegalArgumentException.class, () -> s.flag("SPB_FLAG", false)).getMessage());
    assertEquals(
        "SPB_CPUS: not a number: 'lots'",
        assertThrows(IllegalArgumentException.class, () -> s.decimal("SPB_CPUS", 1)).getMessage());
  }

  @Test
  void aParserThatNamesTheVariableKeepsItsOwnMessage() {
    Settings s = Settings.of(Map.of("SPB_URL", "ftp://x"));
    IllegalArgumentException own =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                s.parsed(
                    "SPB_URL",
                    null,
                    v -> {
                      throw new IllegalArgumentException("SPB_URL must be http(s), got " + v);
                    }));
    assertEquals("SPB_URL must be http(s), got ftp://x", own.getMessage());
  }

  @Test
  void rangesAreCheckedAtBothEnds() {
    Settings s = Settings.of(Map.of("LOW", "0", "HIGH", "1001", "OK", "1000"));
    assertEquals(
        "LOW must be between 1 and 1000, got 0",
        assertThrows(IllegalArgumentException.class, () -> s.integer("LOW", 40, 1, 1000))
            .getMessage());
    assertEquals(
        "HIGH must be between 1 and 1000, got 1001",
        assertThrows(IllegalArgumentException.class, () -> s.integer("HIGH", 40, 1, 1000))
            .getMessage());
    assertEquals(1000, s.integer("OK", 40, 1, 1000));
    assertEquals(
        "LOW must be at least 1, got 0",
        assertThrows(
                IllegalArgumentException.class, () -> s.integer("LOW", 1, 1, Integer.MAX_VALUE))
            .getMessage());
  }

  @Test
  void requiredVariablesSayTheyAreMissing() {
    assertEquals(
        "SPB_MODEL is missing",
        assertThrows(
                IllegalArgumentException.class,
                () -> Settings.of(Map.of("SPB_MODEL", " ")).required("SPB_MODEL"))
            .getMessage());
    assertEquals("m", Settings.of(Map.of("SPB_MODEL", " m ")).required("SPB_MODEL"));
  }

  @Test
  void translatesBetweenTheJsonKeysAndTheVariables() {
    Map<String, String> keys = Map.of("SPB_HTTP_PORT", "httpPort", "SPB_DATA_DIR", "dataDir");
    assertEquals(
        Map.of("SPB_HTTP_PORT", "8080"),
        Settings.byVariable(Map.of("httpPort", 8080, "other", "x"), keys));
    Map<String, String> env = Map.of("SPB_HTTP_PORT", " 80 ", "SPB_DATA_DIR", "", "HOME", "/h");
    assertEquals(Map.of("httpPort", "80"), Settings.byKey(env, keys, false));
    assertEquals(
        Map.of("httpPort", " 80 ", "dataDir", ""), Settings.byKey(env, keys, true), "kept as set");
    assertEquals(
        Map.of("SPB_DATA_DIR", ""), Settings.of(env).subset(List.of("SPB_DATA_DIR", "SPB_NONE")));
  }
}
