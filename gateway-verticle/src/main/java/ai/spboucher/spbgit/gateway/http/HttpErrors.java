package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.audit.AuditStorageFullException;
import ai.spboucher.spbgit.gateway.environment.EnvironmentFileException;
import ai.spboucher.spbgit.gateway.environment.InstructionsFileException;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.git.BodyTooLargeException;
import ai.spboucher.spbgit.gateway.git.MalformedGitRequestException;
import io.netty.handler.codec.http.websocketx.WebSocketHandshakeException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.text.MessageFormat;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.ZipException;
import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.errors.PackProtocolException;
import org.eclipse.jgit.errors.TooLargeObjectInPackException;
import org.eclipse.jgit.errors.TooLargePackException;
import org.eclipse.jgit.errors.UnpackException;
import org.eclipse.jgit.internal.JGitText;
import org.eclipse.jgit.transport.UploadPackInternalServerErrorException;

/**
 * The one place where failures become HTTP answers: a status from the exception type and a JSON
 * body {@code {"error": "..."}}. Server faults are logged with their stack and answered with a
 * generic message; the two the owner can act on, a service down (503) and a full data directory
 * (507), say what happened.
 */
public final class HttpErrors {

  private static final System.Logger LOG = System.getLogger(HttpErrors.class.getName());

  /**
   * The two ends of JGit's message for a stateless request that goes on after its end. Upload-pack
   * raises it as a {@link CorruptObjectException}, a type that otherwise means a damaged
   * repository, so only the message tells the client's fault apart.
   */
  private static final String[] TRAILING_REQUEST_DATA =
      MessageFormat.format(JGitText.get().expectedEOFReceived, "\0").split("\0", 2);

  private HttpErrors() {}

  /** The failure handler for every route. */
  public static void handle(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    int status = failure == null ? ctx.statusCode() : statusOf(failure, ctx.statusCode());
    boolean explained = status == 503 || status == 507;
    String message = status >= 500 && !explained ? "internal error" : messageOf(failure, status);
    if (status >= 500 && !explained) {
      LOG.log(
          System.Logger.Level.ERROR,
          "request failed: " + ctx.request().method() + " " + ctx.request().path(),
          failure);
    } else if (status == 507) {
      LOG.log(
          System.Logger.Level.WARNING,
          "request refused: "
              + ctx.request().method()
              + " "
              + ctx.request().path()
              + ": "
              + message);
    }
    if (ctx.response().headWritten()) {
      ctx.response().reset();
      return;
    }
    if (status == 401) {
      ctx.response()
          .putHeader(
              "WWW-Authenticate",
              isGitPath(ctx.request().path())
                  ? "Basic realm=\"SPB Git\""
                  : "Bearer realm=\"SPB Git\"");
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store")
        .end(new JsonObject().put("error", message).encode());
  }

  /**
   * The status of each domain exception, and of the JGit and Vert.x ones the gateway lets through,
   * in one table (the release is Java 17, so a switch on the type is not yet available). A type's
   * entry applies to its subclasses; the first entry that matches wins. A 400 gives way to the 4xx
   * the failing handler suggested.
   */
  private static final Map<Class<? extends Throwable>, Integer> STATUSES = statuses();

  private static Map<Class<? extends Throwable>, Integer> statuses() {
    Map<Class<? extends Throwable>, Integer> statuses = new LinkedHashMap<>();
    // The gateway's own refusals: one status per kind of RequestException.
    statuses.put(RequestException.Invalid.class, 400);
    statuses.put(RequestException.Unauthenticated.class, 401);
    statuses.put(RequestException.Forbidden.class, 403);
    statuses.put(RequestException.NotFound.class, 404);
    statuses.put(RequestException.Conflict.class, 409);
    statuses.put(RequestException.TooLarge.class, 413);
    statuses.put(RequestException.Unavailable.class, 503);
    statuses.put(AuditStorageFullException.class, 507);
    statuses.put(TooLargePackException.class, 413);
    statuses.put(TooLargeObjectInPackException.class, 413);
    statuses.put(BodyTooLargeException.class, 413);
    // At job creation: the default branch's .spbgit/agent.yml cannot be used, so the job is refused
    // unrecorded.
    statuses.put(EnvironmentFileException.class, 400);
    // Likewise AGENTS.md, for a job of the built-in agent.
    statuses.put(InstructionsFileException.class, 400);
    statuses.put(MalformedGitRequestException.class, 400);
    statuses.put(DecodeException.class, 400);
    statuses.put(IllegalArgumentException.class, 400);
    statuses.put(WebSocketHandshakeException.class, 400);
    return Collections.unmodifiableMap(statuses);
  }

  /** The status for a failure; {@code suggested} is what the failing handler asked for, or -1. */
  static int statusOf(Throwable t, int suggested) {
    if ((t instanceof UploadPackInternalServerErrorException || t instanceof UncheckedIOException)
        && t.getCause() != null) {
      // JGit's protocol v2 parser reads pkt-lines through an iterator, which wraps a malformed one
      // unchecked.
      return statusOf(t.getCause(), suggested);
    }
    int status =
        STATUSES.entrySet().stream()
            .filter(e -> e.getKey().isInstance(t))
            .mapToInt(Map.Entry::getValue)
            .findFirst()
            .orElse(isMalformedGitRequest(t) ? 400 : -1);
    if (t instanceof UnpackException && t.getCause() != null && statusOf(t.getCause(), -1) == 413) {
      status = 413;
    }
    if ((status == 400 || status == -1) && suggested >= 400 && suggested < 500) {
      return suggested;
    }
    return status > 0 ? status : suggested > 0 ? suggested : 500;
  }

  /**
   * JGit reports a malformed pkt-line, a truncated body or a corrupt pack as a plain {@link
   * IOException} (or a few subclasses), and data after a fetch request as a corrupt object;
   * file-system faults use other subclasses and stay 500.
   */
  private static boolean isMalformedGitRequest(Throwable t) {
    return t instanceof PackProtocolException
        || t instanceof UnpackException
        || t instanceof EOFException
        || t instanceof ZipException
        || (t != null && t.getClass() == IOException.class)
        || t instanceof CorruptObjectException
            && t.getMessage() != null
            && t.getMessage().startsWith(TRAILING_REQUEST_DATA[0])
            && t.getMessage().endsWith(TRAILING_REQUEST_DATA[1]);
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
    if ((failure instanceof UploadPackInternalServerErrorException
            || failure instanceof UncheckedIOException)
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
    return path != null
        && (path.endsWith("/info/refs")
            || path.endsWith("/git-receive-pack")
            || path.endsWith("/git-upload-pack"));
  }
}
