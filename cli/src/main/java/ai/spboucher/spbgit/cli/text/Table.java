package ai.spboucher.spbgit.cli.text;

import java.util.ArrayList;
import java.util.List;

/**
 * Left-aligned columns separated by two spaces, for list commands. Cells are made {@link
 * AnsiFilter#plain plain} first: they may hold text a job or another client chose.
 */
public final class Table {

  private final List<String> headers;
  private final List<List<String>> rows = new ArrayList<>();

  public Table(String... headers) {
    this.headers = List.of(headers);
  }

  public Table row(Object... cells) {
    List<String> row = new ArrayList<>();
    for (Object cell : cells) {
      row.add(cell == null ? "-" : AnsiFilter.plain(cell.toString()));
    }
    rows.add(row);
    return this;
  }

  /** The table with a header line; the last column is never padded. */
  public String render() {
    int[] widths = new int[headers.size()];
    for (int i = 0; i < widths.length; i++) {
      widths[i] = headers.get(i).length();
      for (List<String> row : rows) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    StringBuilder out = new StringBuilder();
    line(out, headers, widths);
    rows.forEach(row -> line(out, row, widths));
    return out.toString();
  }

  private static void line(StringBuilder out, List<String> cells, int[] widths) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < cells.size(); i++) {
      line.append(cells.get(i));
      if (i < cells.size() - 1) {
        line.append(" ".repeat(widths[i] - cells.get(i).length() + 2));
      }
    }
    out.append(line.toString().stripTrailing()).append('\n');
  }
}
