package ai.spboucher.spbgit.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class AnsiFilterTest {

  private static final String RED = "\u001b[31m";
  private static final String RESET = "\u001b[0m";

  @Test
  void plainOutputLosesColoursButKeepsText() {
    assertEquals(
        "red and bold\n",
        new AnsiFilter(false).filter(RED + "red" + RESET + " and \u001b[1;4mbold" + RESET + "\n"));
  }

  @Test
  void terminalOutputKeepsColours() {
    String coloured = RED + "red" + RESET + " \u001b[38;5;208morange\u001b[m\n";
    assertEquals(coloured, new AnsiFilter(true).filter(coloured));
  }

  @Test
  void terminalOutputLosesEverySequenceThatIsNotAColour() {
    AnsiFilter filter = new AnsiFilter(true);
    String hostile =
        "a\u001b]0;pwned title\u0007b" // window title (OSC, BEL-terminated)
            + "\u001b]52;c;ZXZpbA==\u001b\\c" // clipboard write (OSC, ST-terminated)
            + "\u001b[2J\u001b[Hd" // clear screen, cursor home
            + "\u001b[6ne" // device status report (makes the terminal answer)
            + "\u001bPq#0;2;0;0;0\u001b\\f" // DCS
            + "\u001b(Bg" // charset designation
            + "\u009b31mh" // 8-bit CSI
            + "\u001b[?1049hi"; // alternate screen
    assertEquals("abcdefghi", filter.filter(hostile));
  }

  @Test
  void controlCharactersOtherThanTabNewlineAndReturnAreRemoved() {
    assertEquals("a\tb\r\nc", AnsiFilter.strip("a\tb\u0007\u0008\r\n\u0000c\u007f\u0085"));
    assertEquals(
        "abc dé", AnsiFilter.strip("a\u202eb\u2066c\u2069 dé"), "bidi overrides go, letters stay");
  }

  @Test
  void sequencesSplitAcrossChunksAreHandledAsWhole() {
    AnsiFilter plain = new AnsiFilter(false);
    assertEquals("x", plain.filter("x\u001b"));
    assertEquals("", plain.filter("[3"));
    assertEquals("y", plain.filter("1my"));
    AnsiFilter colours = new AnsiFilter(true);
    assertEquals("x", colours.filter("x\u001b["));
    assertEquals(RED + "y", colours.filter("31my"));
    assertEquals("z", colours.filter("\u001b]0;ti") + colours.filter("tle\u0007z"));
  }

  @Test
  void finishResetsAColourLeftOn() {
    AnsiFilter filter = new AnsiFilter(true);
    filter.filter(RED + "unterminated red");
    assertEquals(RESET, filter.finish());
    assertEquals("", filter.finish());
    AnsiFilter closed = new AnsiFilter(true);
    closed.filter(RED + "red" + RESET);
    assertEquals("", closed.finish());
  }

  @Test
  void anUnterminatedStringDoesNotSwallowTheRestOfTheLog() {
    AnsiFilter filter = new AnsiFilter(true);
    String out = filter.filter("\u001b]0;" + "x".repeat(5000) + "visible");
    assertEquals("visible", out.substring(out.length() - "visible".length()));
  }

  @Test
  void plainIsOneLine() {
    assertEquals("a b c", AnsiFilter.plain("a\nb\t" + RED + "c"));
  }
}
