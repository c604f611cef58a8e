package ai.spboucher.spbgit.gateway.git;

import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.hooks.JobTokenPreReceiveHook;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.transport.PacketLineOut;
import org.eclipse.jgit.transport.PreReceiveHook;
import org.eclipse.jgit.transport.PreReceiveHookChain;
import org.eclipse.jgit.transport.ReceiveCommand;
import org.eclipse.jgit.transport.ReceivePack;
import org.eclipse.jgit.transport.RefAdvertiser.PacketLineOutRefAdvertiser;
import org.eclipse.jgit.transport.UploadPack;

/**
 * The JGit side of smart HTTP: ref advertisements, fetch and push, each in stateless-RPC form. Every method
 * blocks on repository I/O and on the streams: run it on the git worker pool.
 */
final class PackTransport {

  private final RepositoryStore repos;
  private final long maxPushBytes;
  private final long maxObjectBytes;
  private final JobPushListener jobPushes;

  PackTransport(RepositoryStore repos, long maxPushBytes, long maxObjectBytes, JobPushListener jobPushes) {
    this.repos = repos;
    this.maxPushBytes = maxPushBytes;
    this.maxObjectBytes = maxObjectBytes;
    this.jobPushes = jobPushes;
  }

  /** Writes the {@code info/refs} advertisement; {@code protocol} holds the client's Git-Protocol parameters. */
  void advertise(RepoName name, GitService service, List<String> protocol, OutputStream out) throws IOException {
    try (Repository repo = repos.open(name)) {
      PacketLineOut pckOut = new PacketLineOut(out);
      if (service == GitService.UPLOAD_PACK) {
        UploadPack up = uploadPack(repo, protocol);
        try {
          // Writes the "# service=" preamble itself and switches to a v2 capability list when asked.
          up.sendAdvertisedRefs(new PacketLineOutRefAdvertiser(pckOut), service.serviceName());
        } finally {
          up.getRevWalk().close();
        }
      } else {
        pckOut.writeString("# service=" + service.serviceName() + "\n");
        pckOut.end();
        receivePack(repo, name, null, null).sendAdvertisedRefs(new PacketLineOutRefAdvertiser(pckOut));
      }
    }
  }

  void upload(RepoName name, List<String> protocol, InputStream in, OutputStream out) throws IOException {
    try (Repository repo = repos.open(name)) {
      uploadPack(repo, protocol).upload(in, out, null);
    }
  }

  void receive(RepoName name, Principal pusher, InputStream in, OutputStream out) throws IOException {
    try (Repository repo = repos.open(name)) {
      receivePack(repo, name, pusher, in).receiveWithExceptionPropagation(in, out, null);
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

  /** @param in the request body, or null when only advertising */
  private ReceivePack receivePack(Repository repo, RepoName name, Principal pusher, InputStream in) {
    ReceivePack rp = new ReceivePack(repo);
    rp.setBiDirectionalPipe(false);
    rp.setMaxPackSizeLimit(maxPushBytes);
    rp.setMaxObjectSizeLimit(maxObjectBytes);
    rp.setCheckReceivedObjects(true);
    rp.setAllowPushOptions(false);
    List<PreReceiveHook> gates = new ArrayList<>();
    if (in != null) {
      gates.add(new EndOfRequestHook(in));
    }
    if (pusher instanceof Principal.Job job) {
      gates.add(new JobTokenPreReceiveHook(job.claims(), name.value()));
      rp.setPostReceiveHook((receivePack, commands) -> {
        JsonArray refs = new JsonArray();
        commands.stream().filter(c -> c.getResult() == ReceiveCommand.Result.OK).forEach(c -> refs.add(
            new JsonObject().put("ref", c.getRefName()).put("old", c.getOldId().name()).put("new", c.getNewId().name())));
        if (!refs.isEmpty()) {
          jobPushes.refsWritten(job.claims().jobId(), name.value(), job.tokenId(), refs);
        }
      });
    }
    rp.setPreReceiveHook(PreReceiveHookChain.newChain(gates));
    return rp;
  }
}
