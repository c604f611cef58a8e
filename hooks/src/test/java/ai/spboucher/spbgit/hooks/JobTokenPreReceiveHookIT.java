package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.eclipse.jgit.errors.RepositoryNotFoundException;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.eclipse.jgit.transport.Daemon;
import org.eclipse.jgit.transport.ReceivePack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-process hook as the gateway installs it, on a JGit {@link ReceivePack} over a real
 * repository on disk, pushed to by the stock git client (over JGit's git:// daemon, the transport
 * with the least extra machinery).
 */
class JobTokenPreReceiveHookIT {

  private static final Instant ISSUED = Instant.now();
  private static final JobTokenClaims CLAIMS =
      new JobTokenClaims(
          "abc",
          "token-1",
          "demo",
          RefScope.forJob("abc"),
          List.of(JobTokenClaims.PUSH_AGENT_REF),
          ISSUED,
          ISSUED,
          ISSUED.plusSeconds(3600));

  @TempDir Path dir;

  private TestGit git;
  private Repository server;
  private Daemon daemon;
  private Path work;
  private String repoNameSeenByHook = "demo";

  @BeforeEach
  void startServer() throws Exception {
    git = new TestGit(Files.createDirectory(dir.resolve("home")));
    server =
        new FileRepositoryBuilder().setGitDir(dir.resolve("demo.git").toFile()).setBare().build();
    server.create(true);
    daemon = new Daemon(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    daemon.getService("git-receive-pack").setEnabled(true);
    daemon.setRepositoryResolver(
        (client, name) -> {
          if (!name.equals("demo.git")) {
            throw new RepositoryNotFoundException(name);
          }
          server.incrementOpen();
          return server;
        });
    daemon.setReceivePackFactory(
        (client, db) -> {
          ReceivePack rp = new ReceivePack(db);
          rp.setPreReceiveHook(new JobTokenPreReceiveHook(CLAIMS, repoNameSeenByHook));
          return rp;
        });
    daemon.start();
    work = dir.resolve("work");
    git.initWithEmptyCommit(dir, work);
  }

  @AfterEach
  void stopServer() throws InterruptedException {
    daemon.stopAndWait();
    server.close();
  }

  @Test
  void admitsRefInsideTheJobNamespace() throws Exception {
    TestGit.Result push = push("HEAD:refs/agents/abc/proposal");

    assertEquals(0, push.exitCode(), push.output());
    assertEquals(List.of("refs/agents/abc/proposal"), serverRefs());
  }

  @Test
  void nonAtomicPushRefusesOnlyTheRefOutsideTheScope() throws Exception {
    TestGit.Result push = push("HEAD:refs/agents/abc/ok", "HEAD:refs/agents/abcd/x");

    assertNotEquals(0, push.exitCode(), push.output());
    assertTrue(
        push.output()
            .contains("outside the job's scope; job tokens may only push refs/agents/abc/*"),
        push.output());
    assertEquals(List.of("refs/agents/abc/ok"), serverRefs());
  }

  @Test
  void atomicPushWithOneRefusalUpdatesNothing() throws Exception {
    TestGit.Result push = push(true, "HEAD:refs/agents/abc/ok", "HEAD:refs/heads/main");

    assertNotEquals(0, push.exitCode(), push.output());
    assertTrue(
        push.output()
            .contains("atomic push refused because refs/heads/main is outside the job's scope"),
        push.output());
    assertEquals(List.of(), serverRefs());
  }

  @Test
  void refusesEveryRefOnAnotherRepository() throws Exception {
    repoNameSeenByHook = "other";

    TestGit.Result push = push("HEAD:refs/agents/abc/proposal");

    assertNotEquals(0, push.exitCode(), push.output());
    assertTrue(
        push.output().contains("job token is scoped to repository demo, not other"), push.output());
    assertEquals(List.of(), serverRefs());
  }

  @Test
  void refusesRefsThatWouldNotPointAtACommit() throws Exception {
    Path file = Files.writeString(dir.resolve("blob.txt"), "not a commit\n");
    String blob =
        git.git(work, "hash-object", "-w", file.toString()).assertSucceeded().output().strip();
    git.asTester(work, "tag", "-a", "-m", "tag", "annotated").assertSucceeded();
    git.asTester(work, "tag", "-a", "-m", "tag", "blob-tag", blob).assertSucceeded();

    TestGit.Result push =
        push(
            blob + ":refs/agents/abc/blob",
            "refs/tags/annotated:refs/agents/abc/tag",
            "refs/tags/blob-tag:refs/agents/abc/blob-tag",
            "HEAD:refs/agents/abc/ok");

    assertNotEquals(0, push.exitCode(), push.output());
    assertTrue(
        push.output().contains("pointed at a blob; job refs may only point at commits"),
        push.output());
    assertTrue(
        push.output().contains("pointed at an annotated tag; job refs may only point at commits"),
        push.output());
    assertEquals(List.of("refs/agents/abc/ok"), serverRefs());
  }

  @Test
  void refusesCreationsPastTheRefLimitNamingIt() throws Exception {
    List<String> refspecs = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      refspecs.add("HEAD:refs/agents/abc/flood-" + i);
    }

    TestGit.Result push = push(refspecs.toArray(String[]::new));

    assertNotEquals(0, push.exitCode(), push.output());
    assertTrue(push.output().contains("over the limit of 32 refs per job"), push.output());
    assertEquals(PushGate.MAX_REFS_PER_JOB, serverRefs().size());
  }

  private TestGit.Result push(String... refspecs) throws Exception {
    return push(false, refspecs);
  }

  private TestGit.Result push(boolean atomic, String... refspecs) throws Exception {
    List<String> args = new ArrayList<>(List.of("push"));
    if (atomic) {
      args.add("--atomic");
    }
    args.add("git://127.0.0.1:" + daemon.getAddress().getPort() + "/demo.git");
    args.addAll(Arrays.asList(refspecs));
    return git.git(work, args.toArray(String[]::new));
  }

  private List<String> serverRefs() throws Exception {
    return server.getRefDatabase().getRefs().stream().map(Ref::getName).sorted().toList();
  }
}
