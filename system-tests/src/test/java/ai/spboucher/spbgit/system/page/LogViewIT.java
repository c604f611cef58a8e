package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.TestGateway;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log panel's renderer ({@code webroot/js/log-view.js}) in a real Chromium, on a gateway page
 * so the gateway's Content-Security-Policy applies; fed crafted chunks directly, without a job.
 */
class LogViewIT {

  @TempDir static Path tmp;
  static TestGateway gateway;
  static Browser browser;

  @BeforeAll
  static void start() throws Exception {
    Browser.requireChromium();
    // No NATS: the page only needs the gateway's static files and headers.
    gateway =
        TestGateway.start(
            tmp.resolve("gateway"), new JsonObject().put("natsUrl", "nats://127.0.0.1:1"));
    browser = Browser.start(tmp.resolve("chromium"), gateway.baseUrl);
    browser.open("/login");
  }

  @AfterEach
  void pageRanCleanly() {
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.close();
    }
    if (gateway != null) {
      gateway.close();
    }
  }

  @Test
  void splitsLinesAcrossChunksAndTreatsEveryCarriageReturnAsABreak() {
    Map<String, Object> out =
        render(
            "{}",
            """
        view.append('stdout', 'a\\nb');
        view.append('stderr', 'c\\r');
        view.append('stdout', '\\nd\\re\\r\\n\\nf');
        """);
    assertEquals(List.of("a", "bc", "d", "e", "", "f"), out.get("lines"));
  }

  @Test
  void hostileMarkupAndTerminalLinksStayText() {
    Map<String, Object> out =
        render(
            "{}",
            """
        view.append('stdout', '<script>window.__pwned=1</script>\\n<img src=x onerror=window.__pwned=1>\\n');
        view.append('stdout', '</textarea><a href="javascript:window.__pwned=1">a</a>\\n');
        view.append('stdout', '\\x1b]8;;javascript:window.__pwned=1\\x1b\\\\click\\x1b]8;;\\x1b\\\\\\n');
        view.append('stdout', '\\x1b]8;;https://example.invalid/\\x07web\\x1b]8;;\\x07\\n');
        view.append('stdout', '\\x1b[31m"><img src=x onerror=window.__pwned=1>\\x1b[0m\\n');
        """);
    assertEquals(
        List.of(
            "<script>window.__pwned=1</script>",
            "<img src=x onerror=window.__pwned=1>",
            "</textarea><a href=\"javascript:window.__pwned=1\">a</a>",
            "click",
            "web",
            "\"><img src=x onerror=window.__pwned=1>"),
        out.get("lines"));
    assertEquals(0L, out.get("elements"), "only spans: no a, img, script or textarea");
    assertNull(browser.js("return window.__pwned"));
  }

  @Test
  void coloursSurviveTheContentSecurityPolicyThroughCssom() {
    render(
        "{}",
        "view.append('stdout', '\\x1b[1;31mred\\x1b[0m \\x1b[38;2;1;2;3mtrue\\x1b[0m plain\\n');");
    assertEquals(
        "700",
        browser
            .js("return getComputedStyle(document.querySelector('#t .ansi-red-fg')).fontWeight")
            .toString());
    assertEquals(
        "rgb(1, 2, 3)",
        browser.js(
            "return Array.from(document.querySelectorAll('#t span'))"
                + ".find(s => s.textContent === 'true').style.color"));
    assertEquals(
        0L,
        browser.js("return document.querySelectorAll('#t [style*=\"url\"], #t [onerror]').length"));
  }

  @Test
  void cutsAHugeLineAndStaysResponsive() {
    Map<String, Object> out =
        render(
            "{}",
            """
        const unit = '\\x1b[1;31mX\\x1b[0m';
        const chunk = unit.repeat(Math.floor(65536 / unit.length));
        for (let sent = 0; sent < 5_000_000; sent += chunk.length) view.append('stdout', chunk);
        view.append('stdout', '\\nafter\\n');
        """);
    @SuppressWarnings("unchecked")
    List<String> lines = (List<String>) out.get("lines");
    assertEquals(2, lines.size(), "the huge line and the one after it");
    assertTrue(
        lines.get(0).startsWith("XXXX") && lines.get(0).contains("line cut here"),
        lines.get(0).substring(0, 100));
    assertTrue(lines.get(0).length() < 10_000);
    assertEquals("after", lines.get(1));
    long slowestFrame = ((Number) out.get("slowestFrameMs")).longValue();
    assertTrue(slowestFrame < 500, "no frame took long: slowest " + slowestFrame + " ms");
  }

  @Test
  void manyLongColouredLinesRenderQuickly() {
    // What a 5 MB line of escape sequences becomes in practice: Docker splits it into 16 KB lines.
    Map<String, Object> out =
        render(
            "{}",
            """
        const unit = '\\x1b[1;31mX\\x1b[0m';
        const line = unit.repeat(Math.floor(16384 / unit.length)) + '\\n';
        const chunk = line.repeat(4);
        for (let sent = 0; sent < 5_000_000; sent += chunk.length) view.append('stdout', chunk);
        """);
    @SuppressWarnings("unchecked")
    List<String> lines = (List<String>) out.get("lines");
    assertTrue(lines.size() > 300, "lines: " + lines.size());
    long slowestFrame = ((Number) out.get("slowestFrameMs")).longValue();
    long total = ((Number) out.get("totalMs")).longValue();
    System.out.printf(
        "many long lines: %d ms in all, slowest frame %d ms, %s spans%n",
        total, slowestFrame, browser.js("return document.querySelectorAll('#t span').length"));
    assertTrue(slowestFrame < 500, "no frame took long: slowest " + slowestFrame + " ms");
    assertTrue(total < 20_000, "rendered in " + total + " ms");
  }

  @Test
  void keepsOnlyTheLastLinesWithALinkToTheFullLog() {
    Map<String, Object> out =
        render(
            "{ maxLines: 100 }",
            """
        for (let i = 1; i <= 250; i++) view.append(i % 2 ? 'stdout' : 'stderr', `line-${i}\\n`);
        """);
    @SuppressWarnings("unchecked")
    List<String> lines = (List<String>) out.get("lines");
    assertEquals(100, lines.size());
    assertEquals("line-151", lines.get(0));
    assertEquals("line-250", lines.get(99));
    assertTrue(
        out.get("note").toString().startsWith("150 earlier lines are not shown"),
        out.get("note").toString());
    assertEquals("/full-log", out.get("noteLink"));
  }

  @Test
  void keepsSurrogatePairsWhole() {
    Map<String, Object> out =
        render(
            "{ maxLineChars: 20000 }",
            "view.append('stdout', 'a'.repeat(8191) + '\\u{1F600}\\u{1F600}\\n');");
    @SuppressWarnings("unchecked")
    String line = ((List<String>) out.get("lines")).get(0);
    assertTrue(line.endsWith("\uD83D\uDE00\uD83D\uDE00"), line.substring(line.length() - 4));
  }

  /**
   * Creates a fresh LogView in a panel {@code #t} on the page, runs {@code appends} against it,
   * waits until it has rendered everything, and returns its lines, the count of non-span elements,
   * the note and the slowest frame.
   */
  @SuppressWarnings("unchecked")
  private static Map<String, Object> render(String options, String appends) {
    String script =
        """
        const done = arguments[arguments.length - 1];
        import('/static/js/log-view.js').then(({ LogView }) => {
          document.getElementById('t')?.remove();
          document.getElementById('t-note')?.remove();
          const panel = Object.assign(document.createElement('div'), { id: 't', className: 'log' });
          const note = Object.assign(document.createElement('p'), { id: 't-note' });
          document.body.append(note, panel);
          const view = new LogView(panel, note, '/full-log', %s);
          let slowest = 0;
          const began = performance.now();
          let last = performance.now();
          %s
          const wait = () => {
            const now = performance.now();
            slowest = Math.max(slowest, now - last);
            last = now;
            if (!view.idle) { requestAnimationFrame(wait); return; }
            done({
              lines: Array.from(panel.querySelectorAll('.ln'), l => l.textContent),
              elements: panel.querySelectorAll(':not(span):not(.ln)').length,
              note: note.textContent,
              noteLink: note.querySelector('a')?.getAttribute('href') ?? null,
              slowestFrameMs: Math.round(slowest),
              totalMs: Math.round(performance.now() - began),
            });
          };
          last = performance.now();
          requestAnimationFrame(wait);
        }).catch(e => done({ error: String(e) }));
        """
            .formatted(options, appends);
    Map<String, Object> out = (Map<String, Object>) browser.driver.executeAsyncScript(script);
    assertNull(out.get("error"), String.valueOf(out.get("error")));
    return out;
  }
}
