package ai.spboucher.spbgit.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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

  static Result measure(Path gatewayJar, int warmups, int pushes)
      throws IOException, InterruptedException {
    Path work = Files.createTempDirectory("spb-push-bench");
    try (GatewayProcess gateway = GatewayProcess.start(gatewayJar, work.resolve("gateway"))) {
      Git git = new Git(Files.createDirectories(work.resolve("home")));
      gateway.createRepo(PreReceiveGateBenchmark.REPO);
      String ownerUrl = gateway.gitUrl(PreReceiveGateBenchmark.REPO, gateway.ownerToken());
      Path jobTree = Files.createDirectories(work.resolve("job"));
      git.run(jobTree, "init", "-q", "-b", "main");
      commit(git, jobTree, "README.md", "the repository a job works on\n");
      git.run(jobTree, "push", "-q", ownerUrl, "main");
      git.run(work, "clone", "-q", gateway.gitUrl(PreReceiveGateBenchmark.REPO, null), "owner");
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
          gateway.withNats());
    } finally {
      TempDirs.delete(work);
    }
  }

  private static void commit(Git git, Path tree, String file, String content)
      throws IOException, InterruptedException {
    Path path = tree.resolve(file);
    Files.createDirectories(path.getParent());
    Files.writeString(path, content);
    git.run(tree, "add", file);
    git.run(tree, "commit", "-q", "-m", "add " + file);
  }

  private static Timing timedPush(
      GatewayProcess gateway, Git git, Path tree, String url, String refspec)
      throws IOException, InterruptedException {
    double cpu = gateway.cpuMillis();
    long start = System.nanoTime();
    git.run(tree, "push", "-q", url, refspec);
    double wallMs = (System.nanoTime() - start) / 1e6;
    return new Timing(wallMs, gateway.cpuMillis() - cpu);
  }
}
