package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Limits;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.Signatures;
import ai.spboucher.spbgit.proto.Subjects;
import com.google.protobuf.ByteString;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.PublishOptions;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamState;
import io.nats.client.impl.Headers;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attacker with plain NATS access (it can publish anything and read every subject), against a
 * real gateway, runner and Docker engine: it publishes job requests that would run a command
 * writing to a listener on this machine's own non-loopback address, clone from it and open egress
 * to it (unsigned; a genuine request altered; signed with its own key), replays a finished job's
 * genuine request, and cancels a running job without the gateway's signature. No container runs for
 * any of them and the listener hears nothing; the runner logs and reports each refusal, which the
 * gateway audits as {@code job_refused} for the jobs it knows, leaving them as they were; the
 * cancel is ignored; and no job token is on NATS in clear, neither in what was published nor in
 * what the jobs stream stores. A runner not given the gateway's keys does not start at all.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SignedJobBusIT {

  @TempDir static Path tmp;
  static JobTestBed bed;
  static Vertx runner;
  static HostListener listener;
  static Connection attacker;
  static LoggedLines dispatcher;

  /**
   * How every job token starts: the base64url of {@code {"alg"}. Long enough that random bytes (a
   * sealed token's ciphertext, say) do not spell it by chance, as the bare {@code eyJ} may.
   */
  static final String JWT_HEADER = "eyJhbGci";

  /** Every job request published on NATS while the test ran, as a subscriber sees it. */
  static final List<Message> published = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    dispatcher = LoggedLines.of(JobDispatcher.class);
    // Two slots: one runs a genuine job while the other takes what the attacker sends meanwhile.
    runner = bed.startRunner("guard", Map.of("SPB_RUNNER_SLOTS", "2"));
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    listener = HostListener.listen(HostListener.hostAddress());
    attacker = Nats.connect(bed.nats.url());
    Dispatcher reader = attacker.createDispatcher(published::add);
    reader.subscribe(Subjects.ALL_JOB_REQUESTS);
    attacker.flush(Duration.ofSeconds(5));
  }

  @AfterAll
  static void stop() throws Exception {
    if (attacker != null) {
      attacker.close();
    }
    if (listener != null) {
      listener.close();
    }
    if (dispatcher != null) {
      dispatcher.close();
    }
    if (bed != null) {
      bed.close();
    }
  }

  /**
   * What the attacker wants run: a command writing to the listener, cloning from it, with egress to
   * it, and a token of its own sealed to the runner (whose public key is no secret): only the
   * signature stands between this request and a container.
   */
  private static JobRequest.Builder hostile(String jobId) throws Exception {
    String target = listener.hostPort();
    long now = System.currentTimeMillis();
    PublicKey runnerKey =
        EcKeys.readPublic(
            EcKeys.publicFileBeside(Path.of(bed.runnerEnv("guard").get("SPB_RUNNER_KEY"))));
    TokenSeal.Sealed sealed =
        TokenSeal.seal(jobId, "attacker-token", Map.of(EcKeys.keyId(runnerKey), runnerKey)).get(0);
    return JobRequest.newBuilder()
        .addSealedJobTokens(
            SealedJobToken.newBuilder()
                .setRecipientKid(sealed.recipientKid())
                .setEphemeralKey(ByteString.copyFrom(sealed.ephemeralKey()))
                .setNonce(ByteString.copyFrom(sealed.nonce()))
                .setCiphertext(ByteString.copyFrom(sealed.ciphertext())))
        .setJobId(jobId)
        .setRepo("demo")
        .setCloneUrl("http://" + target + "/demo.git")
        .setBaseRef("main")
        .setTask("hostile")
        .setMode(Mode.MODE_EXEC)
        .setExecCommand("curl -s -m 5 http://" + target + "/marker-" + jobId)
        .addEgressAllow(target)
        .setLimits(Limits.newBuilder().setWallSeconds(60))
        .setDeadlineEpochMs(now + 600_000)
        .setCreatedEpochMs(now);
  }

  private static void publishRaw(String subject, byte[] data, Headers headers, String messageId)
      throws Exception {
    attacker
        .jetStream()
        .publish(subject, headers, data, PublishOptions.builder().messageId(messageId).build());
  }

  private static String newId(String what) {
    return what + "-" + Long.toString(System.nanoTime(), 36);
  }

  /** Waits for the runner's refusal of a request for {@code jobId}; returns its log line. */
  private static String awaitRefusal(String jobId, String reason) throws Exception {
    dispatcher.await(1, Duration.ofSeconds(30), "refused a job request for job " + jobId, reason);
    return dispatcher.matching("refused a job request for job " + jobId, reason).get(0);
  }

  /** The refusals reported for {@code jobId} on NATS. */
  private static List<String> reportedRefusals(String jobId) throws Exception {
    return bed.events(Subjects.refusals(jobId)).stream()
        .filter(JobEvent::hasRefusal)
        .map(e -> e.getRefusal().getRunnerId() + ": " + e.getRefusal().getReason())
        .toList();
  }

  private static void assertNeverRan(String jobId) throws Exception {
    assertTrue(bed.jobContainers(jobId).isEmpty(), "no container of " + jobId);
    assertEquals(List.of(), bed.statusEvents(jobId), "no status of " + jobId);
    assertEquals(List.of(), dispatcher.matching("took job " + jobId), "never taken");
  }

  /** The genuine request of a job the gateway created, as the attacker saw it published. */
  private static Message genuineRequest(String jobId) throws Exception {
    JobTestBed.awaitCondition(
        "the request of " + jobId + " is seen",
        Duration.ofSeconds(10),
        () -> published.stream().anyMatch(m -> jobId.equals(parse(m).getJobId())));
    return published.stream().filter(m -> jobId.equals(parse(m).getJobId())).findFirst().get();
  }

  private static JobRequest parse(Message message) {
    try {
      return JobRequest.parseFrom(message.getData());
    } catch (Exception e) {
      return JobRequest.getDefaultInstance();
    }
  }

  private static Headers signatureOf(Message genuine) {
    Headers headers = new Headers();
    headers.put(Signatures.HEADER, genuine.getHeaders().getFirst(Signatures.HEADER));
    return headers;
  }

  @Test
  @Order(0)
  void aRunnerWithoutTheGatewaysKeysDoesNotStart() throws Exception {
    Map<String, String> env = new HashMap<>(bed.runnerEnv("keyless"));
    env.remove("SPB_GATEWAY_KEYS");
    try (RunnerProcess keyless = RunnerProcess.start(env, tmp.resolve("logs-keyless"))) {
      fail("the runner started without the gateway's keys:\n" + keyless.log());
    } catch (IOException e) {
      assertTrue(
          e.getMessage().contains("SPB_GATEWAY_KEYS is not set: a runner runs only job requests"),
          e.getMessage());
    }
  }

  @Test
  @Order(1)
  void anUnsignedRequestIsRefusedAndNothingRuns() throws Exception {
    String id = newId("unsigned");
    publishRaw(
        Subjects.jobRequests(Subjects.DEFAULT_IMAGE), hostile(id).build().toByteArray(), null, id);
    awaitRefusal(id, "request not signed by the gateway");
    assertEquals(List.of("guard: request not signed by the gateway"), reportedRefusals(id));
    assertNeverRan(id);
    assertTrue(bed.auditEntries(id).isEmpty(), "an unknown job is only logged by the gateway");
    assertEquals(0, listener.accepted().get(), "the listener heard nothing");
  }

  @Test
  @Order(2)
  void aRequestSignedWithAKeyTheRunnerDoesNotTrustIsRefused() throws Exception {
    KeyPair key = EcKeys.generate();
    String own = newId("ownkey");
    byte[] data = hostile(own).build().toByteArray();
    Headers signed = new Headers();
    signed.put(
        Signatures.HEADER,
        DetachedJws.sign(
            Signatures.JOB_REQUEST, EcKeys.keyId(key.getPublic()), key.getPrivate(), data));
    publishRaw(Subjects.jobRequests(Subjects.DEFAULT_IMAGE), data, signed, own);
    assertTrue(awaitRefusal(own, "signed with an unknown key").contains("SPB_GATEWAY_KEYS"));

    // The gateway's key id does not help: the signature is still the attacker's.
    String borrowed = newId("borrowedkid");
    byte[] borrowedData = hostile(borrowed).build().toByteArray();
    String gatewayKid =
        EcKeys.keyId(
            EcKeys.readPublic(bed.gatewayKeys().resolve("job-bus/job-bus-signing.pub.pem")));
    Headers lying = new Headers();
    lying.put(
        Signatures.HEADER,
        DetachedJws.sign(Signatures.JOB_REQUEST, gatewayKid, key.getPrivate(), borrowedData));
    publishRaw(Subjects.jobRequests(Subjects.DEFAULT_IMAGE), borrowedData, lying, borrowed);
    awaitRefusal(borrowed, "forged or altered");

    for (String id : List.of(own, borrowed)) {
      assertEquals(1, reportedRefusals(id).size(), "reported: " + id);
      assertNeverRan(id);
    }
    assertEquals(0, listener.accepted().get(), "the listener heard nothing");
  }

  @Test
  @Order(3)
  void anAlteredGenuineRequestIsRefusedAnUnsignedCancelIgnoredAndTheGenuineJobRunsOn()
      throws Exception {
    String id =
        bed.submit("demo", "for i in $(seq 1 30); do sleep 0.5; done; echo done > long.txt", null)
            .getString("id");
    Message genuine = genuineRequest(id);
    bed.await("demo", id, "started", Duration.ofSeconds(60));

    // One byte of the signed bytes changed: the command's last character.
    byte[] oneByte = genuine.getData().clone();
    byte[] command = "long.txt".getBytes(StandardCharsets.US_ASCII);
    int at = indexOf(oneByte, command) + command.length - 1;
    assertTrue(at > command.length, "the command is in the request");
    oneByte[at] = 'x';
    publishRaw(genuine.getSubject(), oneByte, signatureOf(genuine), "altered-byte-" + id);
    // The attacker's own command, clone URL and egress in the genuine request, under its signature.
    byte[] rewritten =
        parse(genuine).toBuilder()
            .setExecCommand(hostile(id).getExecCommand())
            .setCloneUrl(hostile(id).getCloneUrl())
            .addAllEgressAllow(hostile(id).getEgressAllowList())
            .build()
            .toByteArray();
    publishRaw(genuine.getSubject(), rewritten, signatureOf(genuine), "altered-command-" + id);
    dispatcher.await(2, Duration.ofSeconds(30), "refused a job request for job " + id);
    assertEquals(
        2,
        dispatcher.matching("refused a job request for job " + id, "forged or altered").size(),
        dispatcher.matching(id).toString());

    // An unsigned cancel, and one signed with a key of the attacker's.
    byte[] cancel = CancelJob.newBuilder().setJobId(id).setReason("attacker").build().toByteArray();
    attacker.publish(Subjects.cancel(id), cancel);
    KeyPair key = EcKeys.generate();
    Headers forged = new Headers();
    forged.put(
        Signatures.HEADER,
        DetachedJws.sign(
            Signatures.CANCEL_JOB, EcKeys.keyId(key.getPublic()), key.getPrivate(), cancel));
    attacker.publish(Subjects.cancel(id), forged, cancel);
    attacker.flush(Duration.ofSeconds(5));
    dispatcher.await(2, Duration.ofSeconds(10), "ignoring a cancel on " + Subjects.cancel(id));
    assertTrue(
        dispatcher.matching("ignoring a cancel", "cancel not signed by the gateway").size() >= 1);
    assertEquals(List.of(), dispatcher.matching("cancelling job " + id));

    JsonObject done = bed.awaitFinished("demo", id);
    assertEquals("ok", done.getString("exit_reason"), "not cancelled, not changed: " + done);
    assertTrue(
        bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/proposal"));
    List<JsonObject> refused = entries(id, "job_refused");
    assertEquals(2, refused.size(), bed.auditEvents(id).toString());
    for (JsonObject entry : refused) {
      assertEquals("guard", entry.getString("runner"));
      assertTrue(entry.getString("reason").contains("forged or altered"), entry.encode());
      assertEquals("demo", entry.getString("repo"));
    }
    List<String> events = bed.auditEvents(id);
    assertEquals(1, Collections.frequency(events, "job_started"), "started once: " + events);
    assertEquals(1, Collections.frequency(events, "job_finished"), "ended once: " + events);
    assertEquals(1, dispatcher.matching("took job " + id).size(), "taken once");
    assertEquals(0, listener.accepted().get(), "the listener heard nothing");
  }

  @Test
  @Order(4)
  void aReplayOfAFinishedJobsGenuineRequestIsRefusedAndTheJobStaysFinished() throws Exception {
    String id = bed.submit("demo", "echo once > once.txt", null).getString("id");
    Message genuine = genuineRequest(id);
    JsonObject done = bed.awaitFinished("demo", id);
    assertEquals("ok", done.getString("exit_reason"));
    List<JobEvent> statusBefore = bed.statusEvents(id);

    // Byte for byte, signature and all, under a message id of its own (no deduplication).
    Headers headers = signatureOf(genuine);
    publishRaw(genuine.getSubject(), genuine.getData(), headers, "replay-" + id);
    String line = awaitRefusal(id, "replay");
    assertTrue(line.contains("ran on this runner"), line);

    assertEquals(statusBefore, bed.statusEvents(id), "no second start, no second end");
    assertEquals(1, dispatcher.matching("took job " + id).size(), "taken once");
    assertTrue(bed.jobContainers(id).isEmpty(), "no container left or made");
    List<JsonObject> refused = entries(id, "job_refused");
    assertEquals(1, refused.size(), bed.auditEvents(id).toString());
    assertTrue(refused.get(0).getString("reason").startsWith("replay: "), refused.toString());
    JsonObject after = bed.job("demo", id);
    assertEquals("finished", after.getString("status"));
    assertEquals("ok", after.getString("exit_reason"));
    assertEquals(done.getString("finished_at"), after.getString("finished_at"));
    assertTrue(AuditLog.verify(bed.auditLog()).ok(), "the audit chain holds");
    assertEquals(0, listener.accepted().get(), "the listener heard nothing");
  }

  @Test
  @Order(5)
  void noJobTokenIsOnNatsInClear() throws Exception {
    // A job that waits in the stream: no runner takes it.
    bed.stopRunner(runner);
    String queued = bed.submit("demo", "true", null).getString("id");
    Message genuine = genuineRequest(queued);
    String token = RunnerStandIn.jobToken(bed.gateway, parse(genuine));
    assertTrue(token.startsWith("eyJ"), "the gateway's copy for the stand-in opens");

    List<byte[]> stored = storedRequests();
    assertFalse(stored.isEmpty(), "the jobs stream holds the waiting request");
    assertTrue(published.size() >= 4, "the jobs' requests were all seen: " + published.size());
    int checked = 0;
    for (byte[] data :
        Stream.concat(stored.stream(), published.stream().map(Message::getData)).toList()) {
      String raw = new String(data, StandardCharsets.ISO_8859_1);
      assertFalse(raw.contains(JWT_HEADER), "a JWT-shaped string on NATS");
      assertFalse(raw.contains(token), "the waiting job's token on NATS");
      JobRequest request = JobRequest.parseFrom(data);
      assertFalse(request.getUnknownFields().hasField(11), "a job_token field");
      checked++;
    }
    assertTrue(checked >= 5, "checked " + checked);
    assertNotNull(genuine.getHeaders().getFirst(Signatures.HEADER), "the request is signed");
    assertFalse(Files.readString(bed.auditLog()).contains(JWT_HEADER), "nor in the audit log");
  }

  /** Every message the jobs stream stores now, read raw. */
  private static List<byte[]> storedRequests() throws Exception {
    JetStreamManagement jsm = attacker.jetStreamManagement();
    StreamState state = jsm.getStreamInfo(Subjects.JOBS_STREAM).getStreamState();
    List<byte[]> stored = new ArrayList<>();
    for (long seq = state.getFirstSequence(); seq <= state.getLastSequence(); seq++) {
      try {
        MessageInfo message = jsm.getMessage(Subjects.JOBS_STREAM, seq);
        stored.add(message.getData());
      } catch (JetStreamApiException e) {
        // Taken and deleted: the work queue keeps only what waits.
      }
    }
    return stored;
  }

  private static List<JsonObject> entries(String id, String event) throws Exception {
    return bed.auditEntries(id).stream().filter(e -> event.equals(e.getString("event"))).toList();
  }

  private static int indexOf(byte[] data, byte[] part) {
    outer:
    for (int i = 0; i + part.length <= data.length; i++) {
      for (int j = 0; j < part.length; j++) {
        if (data[i + j] != part[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
