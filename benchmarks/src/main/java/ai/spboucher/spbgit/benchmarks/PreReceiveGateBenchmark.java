package ai.spboucher.spbgit.benchmarks;

import ai.spboucher.spbgit.gateway.DataDir;
import ai.spboucher.spbgit.gateway.auth.Authenticator;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.hooks.JobTokenClaims;
import ai.spboucher.spbgit.hooks.JobTokenPreReceiveHook;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The pre-receive gate as the gateway runs it for one push made with a job token, against the one
 * step no gate can skip: a raw JCA {@code SHA256withECDSA} verification of the same token's signing
 * input with the same key. Everything comes from a real data directory: the gateway's signing key,
 * its revocation list and PAT store, tokens issued by {@link JobTokens}, and a bare JGit
 * repository.
 *
 * <p>Every push uses a token the gateway has not seen yet, as every job has its own: the tokens
 * cycle through a pool twice as large as the number of signatures {@link JobTokenVerifier}
 * remembers.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PreReceiveGateBenchmark {

  static final String REPO = "bench";
  static final String JOB = "bench-job";
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private Path dataDir;
  private Vertx vertx;
  private Repository repository;
  private Authenticator authenticator;
  private String[] tokens;
  private int nextToken;
  private ReceivePack receivePack;
  private List<ReceiveCommand> commands;
  private PublicKey publicKey;
  private byte[][] signingInputs;
  private byte[][] derSignatures;
  private int nextRaw;
  private Signature rawVerifier;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dataDir = Files.createTempDirectory("spb-gate-bench");
    Clock clock = Clock.systemUTC();
    DataDir dir = DataDir.open(dataDir, clock);
    RepoName name = RepoName.of(REPO);
    dir.repos().create(name, "gate benchmark");
    repository = dir.repos().open(name);
    vertx = Vertx.vertx();
    JobTokens jobTokens = dir.jobTokens(clock);
    authenticator = new Authenticator(dir.pats(), jobTokens);
    tokens = new String[2 * JobTokenVerifier.REMEMBERED_SIGNATURES];
    signingInputs = new byte[tokens.length][];
    derSignatures = new byte[tokens.length][];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = jobTokens.issue(JOB, REPO, Duration.ofHours(1));
      int lastDot = tokens[i].lastIndexOf('.');
      signingInputs[i] = tokens[i].substring(0, lastDot).getBytes(StandardCharsets.US_ASCII);
      derSignatures[i] = joseToDer(Base64.getUrlDecoder().decode(tokens[i].substring(lastDot + 1)));
    }

    receivePack = new ReceivePack(repository);
    ObjectId proposal = ObjectId.fromString("0123456789abcdef0123456789abcdef01234567");
    commands =
        List.of(
            new ReceiveCommand(ObjectId.zeroId(), proposal, "refs/agents/" + JOB + "/proposal"));

    publicKey = dir.signingKey().publicKey();
    rawVerifier = Signature.getInstance("SHA256withECDSA");
    if (!rawVerify() || gate() == null) {
      throw new IllegalStateException("the benchmark tokens do not verify");
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    repository.close();
    vertx.close().await();
    TempDirs.delete(dataDir);
  }

  /**
   * What the gateway does with a job token for one push. The client's two requests each go through
   * {@code SmartHttpRoutes.authorize} (authenticate the credential, then require the token's
   * repository to be the one in the URL): {@code info/refs?service=git-receive-pack}, then {@code
   * git-receive-pack}, which also runs the {@link JobTokenPreReceiveHook} that {@code
   * PackTransport} installs on the {@link ReceivePack}.
   */
  @Benchmark
  public JobTokenClaims gate() {
    String token = tokens[nextToken];
    nextToken = (nextToken + 1) % tokens.length;
    authorize(token);
    JobTokenClaims claims = authorize(token);
    new JobTokenPreReceiveHook(claims, REPO).onPreReceive(receivePack, commands);
    if (commands.get(0).getResult() != ReceiveCommand.Result.NOT_ATTEMPTED) {
      throw new IllegalStateException(
          "the gate refused the benchmark ref: " + commands.get(0).getMessage());
    }
    return claims;
  }

  private JobTokenClaims authorize(String token) {
    Principal pusher = authenticator.authenticate(token);
    if (!(pusher instanceof Principal.Job job) || !job.claims().repo().equals(REPO)) {
      throw new IllegalStateException(
          "the benchmark token was not taken as a job token for " + REPO);
    }
    return job.claims();
  }

  /**
   * The baseline: the signature check alone, on bytes prepared in advance, with a reused JCA
   * object.
   */
  @Benchmark
  public boolean rawVerify() throws GeneralSecurityException {
    int i = nextRaw;
    nextRaw = (nextRaw + 1) % tokens.length;
    rawVerifier.initVerify(publicKey);
    rawVerifier.update(signingInputs[i]);
    return rawVerifier.verify(derSignatures[i]);
  }

  /**
   * {@link #gate} and {@link #rawVerify} at the same time, one thread each, in the same JVM: on a
   * shared machine both run under the same load at every moment. Each thread also counts its
   * operations and the CPU time it used, so the cost of one operation in CPU time is known however
   * much of a core the thread was given.
   */
  @Benchmark
  @Group("side_by_side")
  @GroupThreads(1)
  public JobTokenClaims gateSideBySide(GateCpu cpu) {
    cpu.gateOps++;
    return gate();
  }

  /** The baseline half of {@link #gateSideBySide}. */
  @Benchmark
  @Group("side_by_side")
  @GroupThreads(1)
  public boolean rawVerifySideBySide(RawCpu cpu) throws GeneralSecurityException {
    cpu.rawOps++;
    return rawVerify();
  }

  /**
   * Operations and thread CPU time of the gate's thread in one iteration (JMH reports public
   * fields).
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class GateCpu {
    public long gateOps;
    public long gateCpuNanos;
    private long start;

    @Setup(Level.Iteration)
    public void start() {
      gateOps = 0;
      gateCpuNanos = 0;
      start = THREADS.getCurrentThreadCpuTime();
    }

    @TearDown(Level.Iteration)
    public void stop() {
      gateCpuNanos = THREADS.getCurrentThreadCpuTime() - start;
    }
  }

  /** Operations and thread CPU time of the baseline's thread in one iteration. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class RawCpu {
    public long rawOps;
    public long rawCpuNanos;
    private long start;

    @Setup(Level.Iteration)
    public void start() {
      rawOps = 0;
      rawCpuNanos = 0;
      start = THREADS.getCurrentThreadCpuTime();
    }

    @TearDown(Level.Iteration)
    public void stop() {
      rawCpuNanos = THREADS.getCurrentThreadCpuTime() - start;
    }
  }

  /**
   * JOSE (R || S) to the DER form the JCA verifies; done once, so the baseline pays no conversion.
   */
  private static byte[] joseToDer(byte[] jose) {
    byte[] r = new BigInteger(1, Arrays.copyOfRange(jose, 0, 32)).toByteArray();
    byte[] s = new BigInteger(1, Arrays.copyOfRange(jose, 32, 64)).toByteArray();
    byte[] der = new byte[6 + r.length + s.length];
    der[0] = 0x30;
    der[1] = (byte) (4 + r.length + s.length);
    der[2] = 0x02;
    der[3] = (byte) r.length;
    System.arraycopy(r, 0, der, 4, r.length);
    der[4 + r.length] = 0x02;
    der[5 + r.length] = (byte) s.length;
    System.arraycopy(s, 0, der, 6 + r.length, s.length);
    return der;
  }
}
