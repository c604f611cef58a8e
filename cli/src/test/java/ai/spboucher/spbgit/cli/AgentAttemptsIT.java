package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code spbgit agent run --attempts N} as a process against a real gateway and NATS: it starts a
 * best-of-N group and prints the group, its page and each job; a bad N is a usage error.
 */
class AgentAttemptsIT {

  private static final Pattern GROUP = Pattern.compile("(?m)^group (\\S+) \\(2 attempts\\)$");
  private static final Pattern JOB = Pattern.compile("(?m)^job (\\S+)  follow: ");

  @RegisterExtension static final GatewayOnNats bed = new GatewayOnNats();

  @Test
  void startsAGroupAndPrintsItsJobs() throws Exception {
    CliProcess owner = bed.owner();
    for (String bad : List.of("0", "5")) {
      CliProcess.Result refused = owner.run("agent", "run", "demo", "Fix it", "--attempts", bad);
      assertEquals(ExitCode.USAGE, refused.exit(), refused.toString());
      assertTrue(refused.err().contains("--attempts must be 1 to 4"), refused.toString());
    }

    CliProcess.Result run = owner.run("agent", "run", "demo", "Fix it", "--attempts", "2");
    assertEquals(0, run.exit(), run.toString());
    Matcher group = GROUP.matcher(run.out());
    assertTrue(group.find(), run.toString());
    String gid = group.group(1);
    assertTrue(
        run.out().contains("compare: " + bed.gateway.baseUrl + "/repos/demo/agent-groups/" + gid),
        run.toString());
    Matcher jobs = JOB.matcher(run.out());
    JsonArray listed =
        new JsonArray(
            bed.gateway
                .api("GET", "/api/v1/repos/demo/agent-jobs", bed.gateway.ownerToken, null)
                .body());
    assertEquals(2, listed.size(), listed.encodePrettily());
    int printed = 0;
    while (jobs.find()) {
      String id = jobs.group(1);
      assertTrue(
          listed.stream()
              .map(JsonObject.class::cast)
              .anyMatch(j -> id.equals(j.getString("id")) && gid.equals(j.getString("group"))),
          id + " in " + listed.encodePrettily());
      printed++;
    }
    assertEquals(2, printed, run.toString());
  }
}
