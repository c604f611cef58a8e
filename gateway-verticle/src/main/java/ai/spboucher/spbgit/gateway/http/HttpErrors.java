package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.auth.ForbiddenException;
import ai.spboucher.spbgit.gateway.auth.UnauthenticatedException;
import ai.spboucher.spbgit.gateway.jobs.AuditStorageFullException;
import ai.spboucher.spbgit.gateway.repos.InvalidRepoNameException;
import ai.spboucher.spbgit.gateway.repos.RepoExistsException;
import ai.spboucher.spbgit.gateway.repos.RepoNotFoundException;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.text.MessageFormat;
import java.util.zip.ZipException;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.errors.PackProtocolException;
import org.eclipse.jgit.errors.TooLargeObjectInPackException;
import org.eclipse.jgit.errors.TooLargePackException;
import org.eclipse.jgit.errors.UnpackException;
import org.eclipse.jgit.internal.JGitText;
import org.eclipse.jgit.transport.UploadPackInternalServerErrorException;

/**
 * The one place where failures become HTTP answers: a status from the exception type and a JSON body
 * {@code {"error": "..."}}. Server faults are logged with their stack and answered with a generic message; the
 * two the owner can act on, a service down (503) and a full data directory (507), say what happened.
 */
public final class HttpErrors {

  private static final System.Logger LOG = System.getLogger(HttpErrors.class.getName());
  /**
   * The two ends of JGit's message for a stateless request that goes on after its end. Upload-pack raises it as
   * a {@link CorruptObjectException}, a type that otherwise means a damaged repository, so only the message
   * tells the client's fault apart.
   */
  private static final String[] TRAILING_REQUEST_DATA =
      MessageFormat.format(JGitText.get().expectedEOFReceived, "\0").split("\0", 2);

  private HttpErrors() {
  }

  /** The failure handler for every route. */
  public static void handle(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    int status = failure == null ? ctx.statusCode() : statusOf(failure, ctx.statusCode());
    boolean explained = status == 503 || status == 507;
    String message = status >= 500 && !explained ? "internal error" : messageOf(failure, status);
    if (status >= 500 && !explained) {
      LOG.log(System.Logger.Level.ERROR, "request failed: " + ctx.request().method() + " " + ctx.request().path(),
          failure);
    } else if (status == 507) {
      LOG.log(System.Logger.Level.WARNING, "request refused: " + ctx.request().method() + " " + ctx.request().path()
          + ": " + message);
    }
    if (ctx.response().headWritten()) {
      ctx.response().reset();
      return;
    }
    if (status == 401) {
      ctx.response().putHeader("WWW-Authenticate", isGitPath(ctx.request().path())
          ? "Basic realm=\"SPB Git\"" : "Bearer realm=\"SPB Git\"");
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store")
        .end(new JsonObject().put("error", message).encode());
  }

  /** The status for a failure; {@code suggested} is what the failing handler asked for, or -1. */
  static int statusOf(Throwable t, int suggested) {
    if (t instanceof UploadPackInternalServerErrorException && t.getCause() != null) {
      return statusOf(t.getCause(), suggested);
    }
    if (t instanceof UncheckedIOException && t.getCause() != null) {
      // JGit's protocol v2 parser reads pkt-lines through an iterator, which wraps a malformed one this way.
      return statusOf(t.getCause(), suggested);
    }
    if (t instanceof UnauthenticatedException) {
      return 401;
    }
    if (t instanceof ForbiddenException) {
      return 403;
    }
    if (t instanceof RepoNotFoundException || t instanceof NotFoundException) {
      return 404;
    }
    if (t instanceof RepoExistsException || t instanceof ConflictException) {
      return 409;
    }
    if (t instanceof UnavailableException) {
      return 503;
    }
    if (t instanceof AuditStorageFullException) {
      return 507;
    }
    if (t instanceof TooLargePackException || t instanceof TooLargeObjectInPackException
        || t instanceof ai.spboucher.spbgit.gateway.git.BodyTooLargeException) {
      return 413;
    }
    if (t instanceof UnpackException && t.getCause() != null && statusOf(t.getCause(), -1) == 413) {
      return 413;
    }
    if (suggested >= 400 && suggested < 500) {
      return suggested;
    }
    if (t instanceof BadRequestException || t instanceof InvalidRepoNameException || t instanceof DecodeException
        || t instanceof IllegalArgumentException || t instanceof WebSocketHandshakeException
        || isMalformedGitRequest(t)) {
      return 400;
    }
    return suggested > 0 ? suggested : 500;
  }

  /**
   * JGit reports a malformed pkt-line, a truncated body or a corrupt pack as a plain {@link IOException} (or a
   * few subclasses), and data after a fetch request as a corrupt object; file-system faults use other subclasses
   * and stay 500.
   */
  private static boolean isMalformedGitRequest(Throwable t) {
    return t instanceof PackProtocolException || t instanceof UnpackException || t instanceof EOFException
        || t instanceof ZipException || (t != null && t.getClass() == IOException.class)
        || t instanceof CorruptObjectException && t.getMessage() != null
            && t.getMessage().startsWith(TRAILING_REQUEST_DATA[0]) && t.getMessage().endsWith(TRAILING_REQUEST_DATA[1]);
  }

  private static String messageOf(Throwable failure, int status) {
    if (failure == null || failure.getMessage() == null) {
      return switch (status) {
        case 400 -> "bad request";
        case 401 -> "authentication required";
        case 403 -> "forbidden";
        case 404 -> "not found";
        case 405 -> "method not allowed";
        case 413 -> "request body too large";
        case 415 -> "unsupported media type";
        default -> "request failed";
      };
    }
    if ((failure instanceof UploadPackInternalServerErrorException || failure instanceof UncheckedIOException)
        && failure.getCause() != null) {
      return messageOf(failure.getCause(), status);
    }
    String message = failure.getMessage();
    if (failure instanceof UnpackException && failure.getCause() != null) {
      message = "unpack failed: " + failure.getCause().getMessage();
    }
    return message.replaceAll("\\p{Cntrl}", " ");
  }

  private static boolean isGitPath(String path) {
    return path != null && (path.endsWith("/info/refs") || path.endsWith("/git-receive-pack")
        || path.endsWith("/git-upload-pack"));
  }
}
