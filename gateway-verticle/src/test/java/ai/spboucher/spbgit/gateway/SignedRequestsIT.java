package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.gateway.nats.JobBusSigner;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.Signatures;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.Subscription;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the gateway puts on NATS for runners, read as a runner reads it: every job request and
 * cancel is signed with the gateway's job-bus key (whose public half is in {@code keys/job-bus/},
 * the directory runners are given); a job's token is sealed to each runner key in {@code
 * SPB_RUNNER_KEYS} and to no one else; with no runner key the gateway still creates jobs, warning
 * at start and at each such job; a key copied in later is used from the next job on, without a
 * restart. Real gateway, NATS and git.
 */
class SignedRequestsIT {

  private static final String REPO = "demo";
  private static final Logger GATEWAY = Logger.getLogger(GatewayVerticle.class.getName());
  private static final Logger SIGNER = Logger.getLogger(JobBusSigner.class.getName());

  @TempDir Path tmp;

  @Test
  void requestsAndCancelsAreSignedAndTokensSealedToTheRegisteredRunnersOnly() throws Exception {
    List<String> warnings = new CopyOnWriteArrayList<>();
    Handler recorder =
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            warnings.add(String.valueOf(record.getMessage()));
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    GATEWAY.addHandler(recorder);
    SIGNER.addHandler(recorder);
    Path runnerKeys = Files.createDirectories(tmp.resolve("runner-keys"));
    try (Stack stack =
        Stack.builder(tmp)
            .nats()
            .gateway(new JsonObject().put("runnerKeys", runnerKeys.toString()))
            .start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      Connection runner = stack.natsConnection();
      assertTrue(
          warnings.stream().anyMatch(w -> w.startsWith("no runner key is registered in")),
          "warned at start: " + warnings);
      Function<String, PublicKey> jobBusKeys = jobBusKeys(gateway);
      stack.createRepo(REPO, "work");

      String unsealed = create(gateway);
      Message first = take(runner);
      JobRequest request = JobRequest.parseFrom(first.getData());
      assertEquals(unsealed, request.getJobId());
      assertEquals(0, request.getSealedJobTokensCount(), "sealed to no one");
      verify(first, Signatures.JOB_REQUEST, jobBusKeys);
      assertTrue(
          warnings.stream()
              .anyMatch(
                  w -> w.contains("job " + unsealed + " is queued with its token sealed to no")),
          "warned at the job: " + warnings);

      // A runner is authorized: the next job's token is sealed to it, without a restart.
      KeyPair runnerKey = EcKeys.generate();
      Files.writeString(runnerKeys.resolve("r1.pub.pem"), EcKeys.publicPem(runnerKey.getPublic()));
      String sealed = create(gateway);
      Message second = take(runner);
      verify(second, Signatures.JOB_REQUEST, jobBusKeys);
      JobRequest sealedRequest = JobRequest.parseFrom(second.getData());
      assertEquals(1, sealedRequest.getSealedJobTokensCount());
      SealedJobToken copy = sealedRequest.getSealedJobTokens(0);
      String kid = EcKeys.keyId(runnerKey.getPublic());
      assertEquals(kid, copy.getRecipientKid());
      String token =
          TokenSeal.open(
              sealed,
              new TokenSeal.Sealed(
                  kid,
                  copy.getEphemeralKey().toByteArray(),
                  copy.getNonce().toByteArray(),
                  copy.getCiphertext().toByteArray()),
              kid,
              runnerKey.getPrivate());
      JsonObject claims =
          new JsonObject(
              new String(
                  Base64.getUrlDecoder().decode(token.split("\\.")[1]), StandardCharsets.UTF_8));
      assertEquals(sealed, claims.getString("sub"), "the job's own token");
      assertFalse(
          new String(second.getData(), StandardCharsets.ISO_8859_1).contains(token),
          "not in clear");

      // Cancels are signed too, as cancels.
      Subscription cancels = runner.subscribe(Subjects.CANCEL_PREFIX + ">");
      runner.flush(Duration.ofSeconds(5));
      HttpResponse<String> cancelled =
          gateway.api(
              "POST",
              "/api/v1/repos/" + REPO + "/agent-jobs/" + sealed + "/cancel",
              gateway.ownerToken,
              null);
      assertEquals(202, cancelled.statusCode(), cancelled.body());
      Message cancel = cancels.nextMessage(Duration.ofSeconds(10));
      assertEquals(sealed, CancelJob.parseFrom(cancel.getData()).getJobId());
      verify(cancel, Signatures.CANCEL_JOB, jobBusKeys);
    } finally {
      GATEWAY.removeHandler(recorder);
      SIGNER.removeHandler(recorder);
    }
  }

  /** The public keys the gateway gives runners, read as a runner reads them. */
  private static Function<String, PublicKey> jobBusKeys(TestGateway gateway) throws Exception {
    Path dir = gateway.dataDir.resolve("keys").resolve(SigningKey.JOB_BUS_DIR);
    try (var files = Files.list(dir)) {
      List<Path> keys = files.toList();
      assertEquals(1, keys.size(), "only public keys in " + dir + ": " + keys);
      PublicKey key = EcKeys.readPublic(keys.get(0));
      return Map.of(EcKeys.keyId(key), key)::get;
    }
  }

  private static void verify(Message message, String type, Function<String, PublicKey> keys)
      throws Exception {
    DetachedJws.verify(
        message.getHeaders().getFirst(Signatures.HEADER), message.getData(), type, keys);
  }

  private static String create(TestGateway gateway) throws Exception {
    return gateway
        .createJob(REPO, new JsonObject().put("task", "t").put("exec", "true"))
        .getString("id");
  }

  /** Takes the next request off the default image's queue, headers and all, as a runner does. */
  private static Message take(Connection runner) throws Exception {
    JetStreamSubscription queue =
        runner
            .jetStream()
            .subscribe(
                Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
                PullSubscribeOptions.bind(
                    Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE)));
    List<Message> taken = queue.fetch(1, Duration.ofSeconds(10));
    assertEquals(1, taken.size(), "a request was queued");
    taken.get(0).ack();
    queue.unsubscribe();
    return taken.get(0);
  }
}
