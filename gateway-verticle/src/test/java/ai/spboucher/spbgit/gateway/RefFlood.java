package ai.spboucher.spbgit.gateway;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The ref flood of issue 12: receive-pack requests that each create thousands of refs with long
 * names under a job's namespace, sent as raw smart HTTP (the git CLI would need a command line per
 * ref). Shared by the attack test and the load-and-abuse suite.
 */
public final class RefFlood {

  /**
   * What the server answered, over every push of the flood.
   *
   * @param admitted the {@code ok <ref>} lines
   * @param refused the {@code ng <ref> <reason>} lines
   * @param failures pushes answered with something other than 200 (status and body)
   */
  public record Outcome(List<String> admitted, List<String> refused, List<String> failures) {}

  private RefFlood() {}

  /**
   * Sends {@code pushes} receive-pack requests to {@code repoUrl} ({@code
   * http://host:port/<repo>.git}) with {@code token} as the Basic password, each creating {@code
   * refsPerPush} refs below {@code prefix} (e.g. {@code refs/agents/<job>/}), padded to {@code
   * nameLength} characters, all at {@code commit} (which the repository must already have: the
   * pushes carry an empty pack).
   */
  public static Outcome run(
      String repoUrl,
      String token,
      String prefix,
      String commit,
      int pushes,
      int refsPerPush,
      int nameLength)
      throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    String auth =
        "Basic "
            + Base64.getEncoder()
                .encodeToString(("agent:" + token).getBytes(StandardCharsets.UTF_8));
    List<String> admitted = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    for (int push = 0; push < pushes; push++) {
      HttpResponse<byte[]> response =
          http.send(
              HttpRequest.newBuilder(URI.create(repoUrl + "/git-receive-pack"))
                  .timeout(Duration.ofMinutes(2))
                  .header("Authorization", auth)
                  .header("Content-Type", "application/x-git-receive-pack-request")
                  .POST(
                      HttpRequest.BodyPublishers.ofByteArray(
                          request(prefix, commit, push, refsPerPush, nameLength)))
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        failures.add(
            response.statusCode() + " " + new String(response.body(), StandardCharsets.UTF_8));
        continue;
      }
      for (String line : pktLines(response.body())) {
        if (line.startsWith("ok ")) {
          admitted.add(line);
        } else if (line.startsWith("ng ")) {
          refused.add(line);
        }
      }
    }
    return new Outcome(admitted, refused, failures);
  }

  /**
   * The name of ref {@code i} of push {@code push}: unique, valid, exactly {@code length}
   * characters if it can be.
   */
  public static String refName(String prefix, int push, int i, int length) {
    String name = prefix + "flood-" + push + "-" + i + "-";
    return name + "x".repeat(Math.max(0, length - name.length()));
  }

  private static byte[] request(String prefix, String commit, int push, int refs, int nameLength)
      throws Exception {
    PktLines body = new PktLines();
    for (int i = 0; i < refs; i++) {
      String command = PktLines.ZERO_ID + " " + commit + " " + refName(prefix, push, i, nameLength);
      body.line(i == 0 ? command + "\0report-status\n" : command + "\n");
    }
    return body.flush().raw(PktLines.emptyPack()).bytes();
  }

  /** The payloads of a pkt-line stream, without their line ends. */
  private static List<String> pktLines(byte[] body) {
    List<String> lines = new ArrayList<>();
    int at = 0;
    while (at + 4 <= body.length) {
      int length = Integer.parseInt(new String(body, at, 4, StandardCharsets.US_ASCII), 16);
      if (length < 4) {
        at += 4;
        continue;
      }
      ByteArrayOutputStream payload = new ByteArrayOutputStream();
      payload.write(body, at + 4, length - 4);
      lines.add(payload.toString(StandardCharsets.UTF_8).stripTrailing());
      at += length;
    }
    return lines;
  }
}
