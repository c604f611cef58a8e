package ai.spboucher.spbgit.gateway.git;

import ai.spboucher.spbgit.gateway.auth.Authenticator;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPInputStream;

/**
 * Git smart HTTP: {@code GET /<repo>.git/info/refs?service=...}, {@code POST
 * /<repo>.git/git-upload-pack} and {@code POST /<repo>.git/git-receive-pack}. Fetch is anonymous;
 * push needs Basic auth with a PAT or a job token, and a job token only for its own repository. All
 * JGit work runs on the git worker pool; bodies stream in both directions.
 */
public final class SmartHttpRoutes {

  private static final System.Logger LOG = System.getLogger(SmartHttpRoutes.class.getName());

  private static final String REPO = "/(?<repo>[^/]+)\\.git";

  /**
   * Receive-pack results are a few lines per ref; holding them lets an unpack failure still answer
   * 400.
   */
  private static final long RECEIVE_REPORT_HOLD = 1 << 20;

  /**
   * JGit answers a bad fetch request with an ERR line that quotes the offending line, up to a whole
   * 64 KiB pkt-line; holding that much lets such a failure still answer 400 instead of a cut
   * response.
   */
  private static final long UPLOAD_ERROR_HOLD = 128 << 10;

  /**
   * Fetch negotiation bodies are small; this bounds what an anonymous client can make the gateway
   * buffer.
   */
  static final long MAX_FETCH_REQUEST_BYTES = 64L << 20;

  private final Vertx vertx;
  private final WorkerExecutor gitPool;
  private final Authenticator authenticator;
  private final PackTransport transport;
  private final long maxPushBytes;
  private final PushBudget.Limits pushLimits;
  private final PushMemoryGate pushMemory;

  public SmartHttpRoutes(
      Vertx vertx,
      WorkerExecutor gitPool,
      Authenticator authenticator,
      RepositoryStore repos,
      GitLimits limits,
      JobPushListener jobPushes) {
    this.vertx = vertx;
    this.gitPool = gitPool;
    this.authenticator = authenticator;
    this.transport =
        new PackTransport(repos, limits.maxPushBytes(), limits.maxObjectBytes(), jobPushes);
    this.maxPushBytes = limits.maxPushBytes();
    this.pushLimits =
        new PushBudget.Limits(
            limits.maxPushInflatedBytes(), limits.maxDeltaDepth(), limits.pushTimeLimit());
    this.pushMemory = PushMemoryGate.forThisHeap(limits.maxObjectBytes());
  }

  public void mount(Router router) {
    router.getWithRegex(REPO + "/info/refs").handler(this::infoRefs);
    router
        .postWithRegex(REPO + "/git-upload-pack")
        .handler(ctx -> rpc(ctx, GitService.UPLOAD_PACK));
    router
        .postWithRegex(REPO + "/git-receive-pack")
        .handler(ctx -> rpc(ctx, GitService.RECEIVE_PACK));
  }

  private void infoRefs(RoutingContext ctx) {
    RepoName name = RepoName.of(ctx.pathParam("repo"));
    GitService service =
        GitService.named(ctx.request().getParam("service"))
            .orElseThrow(
                () ->
                    new MalformedGitRequestException(
                        "unsupported service: only smart HTTP with service=git-upload-pack or git-receive-pack is served"));
    List<String> protocol = protocolParameters(ctx.request());
    authorize(ctx.request(), name, service)
        .compose(
            pusher ->
                gitPool.executeBlocking(
                    () -> {
                      ByteArrayOutputStream out = new ByteArrayOutputStream();
                      transport.advertise(name, service, protocol, out);
                      return Buffer.buffer(out.toByteArray());
                    },
                    false))
        .onSuccess(
            body ->
                ctx.response()
                    .putHeader("Content-Type", service.advertisementType())
                    .putHeader("Cache-Control", "no-cache")
                    .end(body))
        .onFailure(ctx::fail);
  }

  private void rpc(RoutingContext ctx, GitService service) {
    HttpServerRequest request = ctx.request();
    RepoName name = RepoName.of(ctx.pathParam("repo"));
    if (!service.requestType().equals(request.getHeader("Content-Type"))) {
      ctx.fail(
          415, new MalformedGitRequestException("Content-Type must be " + service.requestType()));
      return;
    }
    long limit = service == GitService.RECEIVE_PACK ? maxPushBytes : MAX_FETCH_REQUEST_BYTES;
    String declaredLength = request.getHeader("Content-Length");
    if (declaredLength != null
        && declaredLength.matches("\\d{1,18}")
        && Long.parseLong(declaredLength) > limit) {
      ctx.fail(413, new BodyTooLargeException(limit));
      return;
    }
    // Attach before any asynchronous step, so no body chunk arrives without a reader.
    RequestBodyStream body = RequestBodyStream.attach(request, vertx.getOrCreateContext(), limit);
    boolean gzip = isGzip(request.getHeader("Content-Encoding"));
    List<String> protocol = protocolParameters(request);
    ResponseBodyStream out =
        new ResponseBodyStream(
            ctx.response(),
            vertx.getOrCreateContext(),
            service.resultType(),
            service == GitService.RECEIVE_PACK ? RECEIVE_REPORT_HOLD : UPLOAD_ERROR_HOLD);
    PushBudget budget = new PushBudget(pushLimits, pushMemory);
    PushWatch watch =
        service == GitService.RECEIVE_PACK ? PushWatch.start(vertx, ctx, budget, body) : null;
    authorize(request, name, service)
        .compose(
            pusher -> {
              if (watch != null) {
                watch.stopWhenRevoked(() -> authenticator.isRevoked(pusher));
              }
              return gitPool.executeBlocking(
                  () -> serve(service, name, pusher, protocol, gzip, body, out, budget), false);
            })
        .onFailure(
            err -> {
              if (out.committed() || ctx.response().closed()) {
                // Mid-stream failure (or no client left): the status line is gone, so the only
                // honest signal left is a cut connection. Logged, since the client sees only the
                // cut.
                LOG.log(
                    System.Logger.Level.INFO,
                    service.name().toLowerCase(Locale.ROOT)
                        + " of "
                        + name
                        + " cut after "
                        + out.bytesWritten()
                        + " bytes of its answer: "
                        + err);
                ctx.response().reset();
              } else {
                ctx.fail(err);
              }
            });
  }

  /** The JGit side of one request; blocks, on the git pool. */
  private Void serve(
      GitService service,
      RepoName name,
      Principal pusher,
      List<String> protocol,
      boolean gzip,
      RequestBodyStream body,
      ResponseBodyStream out,
      PushBudget budget)
      throws IOException {
    long limit = service == GitService.RECEIVE_PACK ? maxPushBytes : MAX_FETCH_REQUEST_BYTES;
    // GZIPInputStream reads the gzip header as it is made: here, off the event loop.
    WatchedInputStream in =
        new WatchedInputStream(gzip ? new GZIPInputStream(body, 65536) : body, limit);
    boolean refused = false;
    if (service == GitService.UPLOAD_PACK) {
      transport.upload(name, protocol, in, out);
    } else {
      refused = transport.receive(name, pusher, in, out, budget);
    }
    if (!refused) {
      // A stopped push has answered already, and left the rest of its body unread on purpose.
      in.requireWellFormed();
    }
    if (service == GitService.UPLOAD_PACK && out.bytesWritten() == 0) {
      // Every well-formed fetch request gets an answer; JGit returning silently means it saw no
      // request.
      throw new MalformedGitRequestException("malformed upload-pack request");
    }
    out.close();
    return null;
  }

  /** Anonymous for fetch; for push, a verified PAT or a job token scoped to this repository. */
  private Future<Principal> authorize(
      HttpServerRequest request, RepoName name, GitService service) {
    if (service == GitService.UPLOAD_PACK) {
      return Future.succeededFuture();
    }
    try {
      Principal pusher =
          authenticator
              .authenticate(request)
              .orElseThrow(
                  () -> new RequestException.Unauthenticated("authentication required to push"));
      if (pusher instanceof Principal.Job job && !job.claims().repo().equals(name.value())) {
        throw new RequestException.Forbidden(
            "job token is scoped to repository "
                + job.claims().repo()
                + " and cannot push to "
                + name);
      }
      return Future.succeededFuture(pusher);
    } catch (RequestException.Unauthenticated | RequestException.Forbidden e) {
      return Future.failedFuture(e);
    }
  }

  private static List<String> protocolParameters(HttpServerRequest request) {
    String header = request.getHeader("Git-Protocol");
    return header == null || header.isBlank() ? List.of() : Arrays.asList(header.split(":"));
  }

  private static boolean isGzip(String encoding) {
    if (encoding == null || encoding.isBlank() || encoding.equalsIgnoreCase("identity")) {
      return false;
    }
    if (encoding.equalsIgnoreCase("gzip") || encoding.equalsIgnoreCase("x-gzip")) {
      return true;
    }
    throw new MalformedGitRequestException("unsupported Content-Encoding " + encoding);
  }
}
