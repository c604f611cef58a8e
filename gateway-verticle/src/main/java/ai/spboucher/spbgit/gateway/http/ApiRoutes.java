package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.auth.Authenticator;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.auth.Sessions;
import ai.spboucher.spbgit.gateway.auth.TokenStore;
import ai.spboucher.spbgit.gateway.environment.EnvironmentReading;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;

/**
 * The REST API under {@code /api/v1}. Reads of public data are anonymous; everything else needs the
 * owner's PAT as {@code Authorization: Bearer}. Job tokens never call the API: any write with one
 * is refused before it is even verified. Every route is checked against its operation in the
 * OpenAPI document ({@link ApiContract}) before its handler runs. Blocking work (files, JGit) runs
 * through {@code executeBlocking}.
 */
public record ApiRoutes(
    Vertx vertx,
    ApiContract contract,
    Authenticator authenticator,
    RepositoryStore repos,
    TokenStore pats,
    JobTokens jobTokens,
    Sessions sessions,
    Function<RepoName, String> cloneUrl,
    Clock clock) {

  static final String PRINCIPAL = "principal";
  static final String VIA_SESSION = "via_session";

  /** The session cookie set by {@code POST /session}. */
  public static final String SESSION_COOKIE = "spb_session";

  /** The header a signed-in browser echoes its CSRF token in on every state-changing request. */
  public static final String CSRF_HEADER = "X-CSRF-Token";

  private static final int MAX_BODY_BYTES = 64 << 10;

  public void mount(Router router) {
    // Not on GET: a websocket upgrade must reach its handler with the request unread.
    router
        .route("/api/v1/*")
        .method(HttpMethod.POST)
        .method(HttpMethod.PUT)
        .method(HttpMethod.PATCH)
        .method(HttpMethod.DELETE)
        .handler(BodyHandler.create(false).setBodyLimit(MAX_BODY_BYTES));
    router.route("/api/v1/*").handler(this::authenticate);

    contract
        .validated(router.get("/api/v1/openapi.yaml"), "getOpenApiDocument")
        .handler(
            ctx ->
                ctx.response()
                    .putHeader("Content-Type", "application/yaml")
                    .sendFile(ApiContract.DOCUMENT)
                    .onFailure(ctx::fail));
    contract.validated(router.get("/api/v1/repos"), "listRepos").handler(this::listRepos);
    contract.validated(router.post("/api/v1/repos"), "createRepo").handler(this::createRepo);
    contract
        .validated(router.delete("/api/v1/repos/:name"), "deleteRepo")
        .handler(this::deleteRepo);
    contract
        .validated(router.get("/api/v1/repos/:name/agent-environment"), "getAgentEnvironment")
        .handler(this::agentEnvironment);

    contract.validated(router.get("/api/v1/tokens"), "listTokens").handler(this::listTokens);
    contract.validated(router.post("/api/v1/tokens"), "createToken").handler(this::createToken);
    contract
        .validated(router.delete("/api/v1/tokens/:id"), "revokeToken")
        .handler(this::revokeToken);

    contract
        .validated(router.post("/api/v1/job-tokens"), "issueJobToken")
        .handler(this::issueJobToken);
    contract
        .validated(router.delete("/api/v1/job-tokens/:jti"), "revokeJobToken")
        .handler(this::revokeJobToken);
  }

  /** Answers 404 for any other API path; mount after every API route. */
  public static void mountFallback(Router router) {
    router
        .route("/api/v1/*")
        .handler(ctx -> ctx.fail(404, new RequestException.NotFound("no such API endpoint")));
  }

  private void authenticate(RoutingContext ctx) {
    var credential = Authenticator.credentialOf(ctx.request());
    if (credential.isPresent()
        && ctx.request().method() != HttpMethod.GET
        && JobTokenVerifier.looksLikeJwt(credential.get())) {
      throw new RequestException.Forbidden("job tokens cannot call the API");
    }
    if (credential.isPresent()) {
      ctx.put(PRINCIPAL, authenticator.authenticate(credential.get()));
    } else {
      sessionOwner(ctx).ifPresent(owner -> ctx.put(PRINCIPAL, owner));
    }
    ctx.next();
  }

  /**
   * The owner of the request's session cookie, if it is live and its PAT still exists; a
   * state-changing request must also carry the session's CSRF token, or it is refused.
   */
  private Optional<Principal.Owner> sessionOwner(RoutingContext ctx) {
    var cookie = ctx.request().getCookie(SESSION_COOKIE);
    var session =
        sessions
            .find(cookie == null ? null : cookie.getValue())
            .filter(s -> pats.list().stream().anyMatch(t -> t.id().equals(s.tokenId())));
    if (session.isEmpty()) {
      return Optional.empty();
    }
    HttpMethod method = ctx.request().method();
    if (method != HttpMethod.GET
        && method != HttpMethod.HEAD
        && !Sessions.sameToken(session.get().csrf(), ctx.request().getHeader(CSRF_HEADER))) {
      throw new RequestException.Forbidden(
          "missing or invalid CSRF token (send the " + CSRF_HEADER + " header)");
    }
    ctx.put(VIA_SESSION, true);
    return Optional.of(new Principal.Owner(session.get().tokenId()));
  }

  /**
   * Whether the request was authenticated by a browser session cookie rather than a token header.
   */
  public static boolean viaSession(RoutingContext ctx) {
    return Boolean.TRUE.equals(ctx.get(VIA_SESSION));
  }

  private void listRepos(RoutingContext ctx) {
    Responses.answer(
        ctx,
        200,
        vertx
            .executeBlocking(repos::list, false)
            .map(list -> list.stream().map(this::repoJson).toList()));
  }

  private void createRepo(RoutingContext ctx) {
    JsonObject body = Responses.jsonBody(ctx);
    RepoName name = RepoName.of(body.getString("name"));
    String description = Responses.string(body, "description");
    Responses.answer(
        ctx,
        201,
        vertx.executeBlocking(() -> repos.create(name, description), false).map(this::repoJson));
  }

  private void deleteRepo(RoutingContext ctx) {
    RepoName name = RepoName.of(ctx.pathParam("name"));
    answerNoContent(ctx, blocking(() -> repos.delete(name)));
  }

  /**
   * The default branch's {@code .spbgit/agent.yml} as the next job would get it. A file that cannot
   * be used is still a 200: the request is fine, the answer says what is wrong with the file (its
   * error, line and key).
   */
  private void agentEnvironment(RoutingContext ctx) {
    RepoName name = RepoName.of(ctx.pathParam("name"));
    Responses.answer(
        ctx,
        200,
        vertx.executeBlocking(
            () -> {
              try (var repository = repos.open(name)) {
                return EnvironmentReading.of(repository).toJson();
              }
            },
            false));
  }

  private void listTokens(RoutingContext ctx) {
    Responses.json(ctx, 200, pats.list().stream().map(TokenStore.TokenRecord::toJson).toList());
  }

  private void createToken(RoutingContext ctx) {
    String label = Responses.jsonBody(ctx).getString("label");
    Responses.answer(
        ctx,
        201,
        vertx
            .executeBlocking(() -> pats.create(label), false)
            .map(created -> created.record().toJson().put("token", created.secret())));
  }

  private void revokeToken(RoutingContext ctx) {
    String id = ctx.pathParam("id");
    answerNoContent(
        ctx,
        vertx
            .executeBlocking(() -> pats.revoke(id), false)
            .map(
                found -> {
                  if (!found) {
                    throw new RequestException.NotFound("no token with id " + id);
                  }
                  sessions.closeAllOf(id);
                  return null;
                }));
  }

  private void issueJobToken(RoutingContext ctx) {
    JsonObject body = Responses.jsonBody(ctx);
    RepoName repo = RepoName.of(body.getString("repo"));
    String job = body.getString("job");
    long ttl = body.getValue("ttl") instanceof Number n ? n.longValue() : 3600;
    String token = jobTokens.issue(job, repo.value(), Duration.ofSeconds(ttl));
    Responses.json(
        ctx,
        201,
        new JsonObject()
            .put("token", token)
            .put("job", job)
            .put("repo", repo.value())
            .put("expires", clock.instant().plusSeconds(ttl).toString()));
  }

  private void revokeJobToken(RoutingContext ctx) {
    String jti = ctx.pathParam("jti");
    // The expiry is unknown from the id alone; keeping the entry for the longest lifetime is always
    // enough.
    Instant keepUntil = clock.instant().plus(JobTokenVerifier.MAX_LIFETIME);
    answerNoContent(ctx, blocking(() -> jobTokens.revoke(jti, keepUntil)));
  }

  private static void answerNoContent(RoutingContext ctx, Future<?> done) {
    done.onSuccess(v -> Responses.noContent(ctx)).onFailure(ctx::fail);
  }

  /** A change to files, run on a worker. */
  private interface Change {
    void run() throws Exception;
  }

  private Future<Void> blocking(Change change) {
    return vertx.executeBlocking(
        () -> {
          change.run();
          return null;
        },
        false);
  }

  private JsonObject repoJson(RepositoryStore.RepoInfo repo) {
    return new JsonObject()
        .put("name", repo.name())
        .put("description", repo.description())
        .put("clone_url", cloneUrl.apply(RepoName.of(repo.name())));
  }

  /** Only the owner's PAT passes; a job token is forbidden, no credential is unauthenticated. */
  public static Principal.Owner requireOwner(RoutingContext ctx) {
    Principal principal = ctx.get(PRINCIPAL);
    if (principal instanceof Principal.Owner owner) {
      return owner;
    }
    if (principal instanceof Principal.Job) {
      throw new RequestException.Forbidden("job tokens cannot call the API");
    }
    throw new RequestException.Unauthenticated(
        "an owner token is required (Authorization: Bearer <token>)");
  }
}
