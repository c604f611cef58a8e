package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.auth.Authenticator;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.auth.Sessions;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;

/**
 * The owner's pages (static files from {@code webroot/} that read the JSON API) and browser
 * sign-in: a PAT opens a session held in an HttpOnly, SameSite=Strict cookie; its CSRF token is
 * handed to the page by {@code GET /session}. Pages carry a strict Content-Security-Policy, so even
 * text that slipped into the DOM as markup could not run script.
 */
public record WebRoutes(Authenticator authenticator, Sessions sessions, boolean secureCookies) {

  static final String CSP =
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
          + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
  private static final int MAX_BODY_BYTES = 8 << 10;

  public void mount(Router router) {
    router.route("/session").handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES));
    router.post("/session").handler(this::signIn);
    router.get("/session").handler(this::session);
    router.delete("/session").handler(this::signOut);

    router.get("/").handler(ctx -> ctx.redirect("/agent-jobs"));
    router.get("/login").handler(ctx -> page(ctx, "login.html"));
    router.get("/agent-jobs").handler(ctx -> page(ctx, "jobs.html"));
    router.get("/repos/:name/agent-jobs").handler(ctx -> page(ctx, "jobs.html"));
    router.get("/repos/:name/agent-jobs/:id").handler(ctx -> page(ctx, "job.html"));
    router.get("/repos/:name/agent-groups/:gid").handler(ctx -> page(ctx, "group.html"));
    router
        .route("/static/*")
        .handler(
            ctx -> {
              securityHeaders(ctx);
              ctx.next();
            });
    router
        .route("/static/*")
        .handler(
            StaticHandler.create("webroot")
                .setCachingEnabled(false)
                .setDirectoryListing(false)
                .setIncludeHidden(false));
  }

  private void signIn(RoutingContext ctx) {
    String token = Responses.requiredString(Responses.jsonBody(ctx), "token");
    if (JobTokenVerifier.looksLikeJwt(token)) {
      throw new RequestException.Forbidden("job tokens cannot sign in");
    }
    Principal principal = authenticator.authenticate(token);
    Sessions.Session session = sessions.open(principal.tokenId());
    ctx.response()
        .addCookie(
            Cookie.cookie(ApiRoutes.SESSION_COOKIE, session.id())
                .setHttpOnly(true)
                .setSameSite(CookieSameSite.STRICT)
                .setPath("/")
                .setSecure(secureCookies)
                .setMaxAge(12 * 3600));
    Responses.json(
        ctx, 200, new JsonObject().put("csrf", session.csrf()).put("token_id", session.tokenId()));
  }

  private void session(RoutingContext ctx) {
    Sessions.Session session = current(ctx);
    Responses.json(
        ctx, 200, new JsonObject().put("csrf", session.csrf()).put("token_id", session.tokenId()));
  }

  private void signOut(RoutingContext ctx) {
    Sessions.Session session = current(ctx);
    if (!Sessions.sameToken(session.csrf(), ctx.request().getHeader(ApiRoutes.CSRF_HEADER))) {
      throw new RequestException.Forbidden("missing or invalid CSRF token");
    }
    sessions.close(session.id());
    ctx.response()
        .addCookie(
            Cookie.cookie(ApiRoutes.SESSION_COOKIE, "")
                .setPath("/")
                .setMaxAge(0)
                .setHttpOnly(true)
                .setSameSite(CookieSameSite.STRICT));
    Responses.noContent(ctx);
  }

  private Sessions.Session current(RoutingContext ctx) {
    Cookie cookie = ctx.request().getCookie(ApiRoutes.SESSION_COOKIE);
    return sessions
        .find(cookie == null ? null : cookie.getValue())
        .orElseThrow(() -> new RequestException.Unauthenticated("not signed in"));
  }

  private static void page(RoutingContext ctx, String file) {
    securityHeaders(ctx);
    ctx.response()
        .putHeader("Content-Type", "text/html; charset=utf-8")
        .putHeader("Cache-Control", "no-store")
        .sendFile("webroot/" + file)
        .onFailure(ctx::fail);
  }

  private static void securityHeaders(RoutingContext ctx) {
    ctx.response()
        .putHeader("Content-Security-Policy", CSP)
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("Referrer-Policy", "no-referrer")
        .putHeader("X-Frame-Options", "DENY");
  }
}
