package ai.spboucher.spbgit.cli.text;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class DiffStatFormatterTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void rendersLikeGitDiffStat() throws Exception {
    String diff =
        """
        {"files":[
          {"path":"greeting.txt","old_path":null,"change":"ADD","additions":1,"deletions":0,"binary":false},
          {"path":"src/Main.java","old_path":"src/Main.java","change":"MODIFY","additions":3,"deletions":2,
           "binary":false},
          {"path":"logo.png","old_path":null,"change":"ADD","additions":0,"deletions":0,"binary":true}],
         "truncated":false}""";
    assertEquals(
        """
         greeting.txt  | 1 +
         src/Main.java | 5 +++--
         logo.png      | Bin
         3 files changed, 4 insertions(+), 2 deletions(-)
        """,
        DiffStatFormatter.render(JSON.readTree(diff)));
  }

  @Test
  void scalesLongBarsAndNamesRenames() throws Exception {
    String diff =
        """
        {"files":[{"path":"b.txt","old_path":"a.txt","change":"RENAME","additions":400,"deletions":1,
          "binary":false}],"truncated":true}""";
    assertEquals(
        " a.txt => b.txt | 401 "
            + "+".repeat(39)
            + "-\n"
            + " 1 file changed, 400 insertions(+), 1 deletion(-) (the gateway truncated this diff)\n",
        DiffStatFormatter.render(JSON.readTree(diff)));
  }
}
