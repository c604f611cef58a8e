package ai.spboucher.spbgit.gateway.git;

import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.hooks.JobTokenPreReceiveHook;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jgit.errors.UnpackException;
import org.eclipse.jgit.lib.ObjectChecker;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.transport.PacketLineOut;
import org.eclipse.jgit.transport.PreReceiveHook;
import org.eclipse.jgit.transport.PreReceiveHookChain;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;
import org.eclipse.jgit.transport.RefAdvertiser.PacketLineOutRefAdvertiser;
import org.eclipse.jgit.transport.UnpackErrorHandler;
import org.eclipse.jgit.transport.UploadPack;

/**
 * The JGit side of smart HTTP: ref advertisements, fetch and push, each in stateless-RPC form.
 * Every method blocks on repository I/O and on the streams: run it on the git worker pool.
 */
record PackTransport(
    RepositoryStore repos, long maxPushBytes, long maxObjectBytes, JobPushListener jobPushes) {

  private static final System.Logger LOG = System.getLogger(PackTransport.class.getName());

  /**
   * Writes the {@code info/refs} advertisement; {@code protocol} holds the client's Git-Protocol
   * parameters.
   */
  void advertise(RepoName name, GitService service, List<String> protocol, OutputStream out)
      throws IOException {
    try (Repository repo = repos.open(name)) {
      PacketLineOut pckOut = new PacketLineOut(out);
      if (service == GitService.UPLOAD_PACK) {
        UploadPack up = uploadPack(repo, protocol);
        try {
          // Writes the "# service=" preamble itself and switches to a v2 capability list when
          // asked.
          up.sendAdvertisedRefs(new PacketLineOutRefAdvertiser(pckOut), service.serviceName());
        } finally {
          up.getRevWalk().close();
        }
      } else {
        pckOut.writeString("# service=" + service.serviceName() + "\n");
        pckOut.end();
        receivePack(repo, name, null, null, null)
            .sendAdvertisedRefs(new PacketLineOutRefAdvertiser(pckOut));
      }
    }
  }

  void upload(RepoName name, List<String> protocol, InputStream in, OutputStream out)
      throws IOException {
    try (Repository repo = repos.open(name)) {
      uploadPack(repo, protocol).upload(in, out, null);
    }
  }

  /**
   * Runs one push within {@code budget}. A push the budget stops answers like any unpack failure
   * (an {@code unpack error} line naming the limit, {@code ng} for every ref, and the same as a
   * {@code remote:} line over side-band): that report is the answer, and no ref was updated.
   *
   * @return whether the budget refused the push
   */
  boolean receive(
      RepoName name, Principal pusher, InputStream in, OutputStream out, PushBudget budget)
      throws IOException {
    try (Repository repo = repos.open(name)) {
      // Checks the budget as JGit reads, and marks the end of the upload for the memory gate.
      InputStream body =
          new FilterInputStream(in) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
              budget.checkpoint();
              int n = super.read(b, off, len);
              if (n < 0) {
                budget.uploadEnded();
              }
              return n;
            }

            @Override
            public int read() throws IOException {
              return ByteReads.one(this);
            }
          };
      ReceivePack rp = receivePack(repo, name, pusher, body, budget);
      UnpackErrorHandler report = rp.getUnpackErrorHandler();
      rp.setUnpackErrorHandler(
          error -> {
            if (error instanceof PushLimitException stop) {
              rp.sendError(stop.getMessage());
            }
            report.handleUnpackException(error);
          });
      rp.receiveWithExceptionPropagation(body, out, null);
      return false;
    } catch (UnpackException e) {
      if (!(e.getCause() instanceof PushLimitException stop) || stop.clientGone()) {
        throw e;
      }
      LOG.log(
          System.Logger.Level.INFO,
          "push to " + name + " by " + pusher.tokenId() + " refused: " + stop.getMessage());
      return true;
    } catch (PushLimitException e) {
      // Stopped while JGit read the commands, before any report can be sent: a plain HTTP refusal.
      throw new MalformedGitRequestException(e.getMessage());
    } finally {
      budget.finished();
    }
  }

  private static UploadPack uploadPack(Repository repo, List<String> protocol) {
    UploadPack up = new UploadPack(repo);
    up.setBiDirectionalPipe(false);
    if (!protocol.isEmpty()) {
      up.setExtraParameters(protocol);
    }
    return up;
  }

  /**
   * @param in the request body, or null when only advertising
   * @param budget what the push may cost, or null when only advertising
   */
  private ReceivePack receivePack(
      Repository repo, RepoName name, Principal pusher, InputStream in, PushBudget budget) {
    ReceivePack rp =
        budget == null
            ? new ReceivePack(repo)
            : new ReceivePack(repo) {
              {
                // The one JGit hook that sees the parsed pack before any ref is updated: a
                // protected field for subclasses.
                connectivityChecker = new DeltaDepthCheck(connectivityChecker, budget);
              }
            };
    rp.setBiDirectionalPipe(false);
    rp.setMaxPackSizeLimit(maxPushBytes);
    rp.setMaxObjectSizeLimit(maxObjectBytes);
    rp.setObjectChecker(budget == null ? new ObjectChecker() : new BudgetedObjectChecker(budget));
    rp.setAllowPushOptions(false);
    List<PreReceiveHook> gates = new ArrayList<>();
    if (in != null) {
      gates.add(new EndOfRequestHook(in));
    }
    if (pusher instanceof Principal.Job job) {
      gates.add(new JobTokenPreReceiveHook(job.claims(), name.value()));
      rp.setPostReceiveHook(
          (receivePack, commands) -> {
            JsonArray refs = new JsonArray();
            commands.stream()
                .filter(c -> c.getResult() == ReceiveCommand.Result.OK)
                .forEach(
                    c ->
                        refs.add(
                            new JsonObject()
                                .put("ref", c.getRefName())
                                .put("old", c.getOldId().name())
                                .put("new", c.getNewId().name())));
            if (!refs.isEmpty()) {
              jobPushes.refsWritten(job.claims().jobId(), name.value(), job.tokenId(), refs);
            }
          });
    }
    rp.setPreReceiveHook(PreReceiveHookChain.newChain(gates));
    return rp;
  }
}
