package ai.spboucher.spbgit.benchmarks;

import ai.spboucher.spbgit.testsupport.GatewayProcess;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.NatsServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Times a small push end to end, the way a job pushes its proposal: one new commit with one small
 * file, then {@code git push} over HTTP to the real gateway with a job token into {@code
 * refs/agents/<job>/proposal}, each push with the token of a new job, minted through the REST API.
 * The same push made with the owner's token (no job-token gate) is timed alternately, under the
 * same load.
 */
final class SmallPushTiming {

  /**
   * Medians in milliseconds of the timed pushes of each kind: their wall-clock time, and the CPU
   * time the gateway process used meanwhile, which other load on the machine does not change.
   */
  record Result(
      double jobPushMs,
      double ownerPushMs,
      double jobGatewayCpuMs,
      double ownerGatewayCpuMs,
      int pushes,
      boolean withNats) {}

  private record Timing(double wallMs, double gatewayCpuMs) {}

  private SmallPushTiming() {}

  static Result measure(Path gatewayJar, int warmups, int pushes) throws Exception {
    Path work = Files.createTempDirectory("spb-push-bench");
    // The gateway serves git and the repository API without NATS; it gets one, when nats-server is
    // installed, only so that it runs as deployed, not retrying a connection in the background.
    // Closed in reverse order: the gateway first, so it closes its NATS connection cleanly.
    try (NatsServerProcess nats =
            NatsServerProcess.installed() ? NatsServerProcess.start(work.resolve("nats")) : null;
        GatewayProcess gateway =
            GatewayProcess.start(
                gatewayJar,
                List.of(),
                work.resolve("gateway").resolve("data"),
                work.resolve("gateway"),
                nats == null ? Map.of() : Map.of("SPB_NATS_URL", nats.url()))) {
      GitCli git = new GitCli(Files.createDirectories(work.resolve("home")));
      gateway.createRepo(PreReceiveGateBenchmark.REPO);
      String ownerUrl = gateway.gitUrl(PreReceiveGateBenchmark.REPO, gateway.ownerToken());
      Path jobTree = Files.createDirectories(work.resolve("job"));
      git.ok(jobTree, "init", "-q", "-b", "main");
      commit(git, jobTree, "README.md", "the repository a job works on\n");
      git.ok(jobTree, "push", "-q", ownerUrl, "main");
      git.ok(work, "clone", "-q", gateway.gitUrl(PreReceiveGateBenchmark.REPO, null), "owner");
      Path ownerTree = work.resolve("owner");

      List<Timing> jobPushes = new ArrayList<>();
      List<Timing> ownerPushes = new ArrayList<>();
      for (int i = 0; i < warmups + pushes; i++) {
        commit(git, jobTree, "notes/" + i + ".txt", "note " + i + "\n");
        commit(git, ownerTree, "owner/" + i + ".txt", "owner note " + i + "\n");
        // Every job gets its own token, so every push verifies a token the gateway has not seen
        // before.
        String job = PreReceiveGateBenchmark.JOB + "-" + i;
        String jobUrl =
            gateway.gitUrl(
                PreReceiveGateBenchmark.REPO,
                gateway.jobToken(PreReceiveGateBenchmark.REPO, job, 3600));
        String proposal = "HEAD:refs/agents/" + job + "/proposal";
        // Alternate which kind goes first, so neither always follows the other's server-side work.
        boolean jobFirst = i % 2 == 0;
        Timing first =
            jobFirst
                ? timedPush(gateway, git, jobTree, jobUrl, proposal)
                : timedPush(gateway, git, ownerTree, ownerUrl, "HEAD:refs/heads/owner");
        Timing second =
            jobFirst
                ? timedPush(gateway, git, ownerTree, ownerUrl, "HEAD:refs/heads/owner")
                : timedPush(gateway, git, jobTree, jobUrl, proposal);
        if (i >= warmups) {
          jobPushes.add(jobFirst ? first : second);
          ownerPushes.add(jobFirst ? second : first);
        }
      }
      return new Result(
          Stats.median(jobPushes.stream().map(Timing::wallMs).toList()),
          Stats.median(ownerPushes.stream().map(Timing::wallMs).toList()),
          Stats.median(jobPushes.stream().map(Timing::gatewayCpuMs).toList()),
          Stats.median(ownerPushes.stream().map(Timing::gatewayCpuMs).toList()),
          pushes,
          nats != null);
    } finally {
      TempDirs.delete(work);
    }
  }

  private static void commit(GitCli git, Path tree, String file, String content)
      throws IOException, InterruptedException {
    Path path = tree.resolve(file);
    Files.createDirectories(path.getParent());
    Files.writeString(path, content);
    git.ok(tree, "add", file);
    git.ok(tree, "commit", "-q", "-m", "add " + file);
  }

  private static Timing timedPush(
      GatewayProcess gateway, GitCli git, Path tree, String url, String refspec)
      throws IOException, InterruptedException {
    double cpu = gateway.cpuMillis();
    long start = System.nanoTime();
    git.ok(tree, "push", "-q", url, refspec);
    double wallMs = (System.nanoTime() - start) / 1e6;
    return new Timing(wallMs, gateway.cpuMillis() - cpu);
  }
}
