package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Repositories and personal access tokens through the REST API. */
class OwnerApiIT {

  @TempDir static Path tmp;
  static TestGateway gateway;

  @BeforeAll
  static void startGateway() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"));
  }

  @AfterAll
  static void stopGateway() {
    gateway.close();
  }

  @Test
  void createsListsAndDeletesRepositories() throws Exception {
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/repos",
            gateway.ownerToken,
            "{\"name\":\"my-repo.v2\",\"description\":\"A test\"}");
    assertEquals(201, created.statusCode(), created.body());
    assertEquals(
        gateway.baseUrl + "/my-repo.v2.git", new JsonObject(created.body()).getString("clone_url"));
    assertTrue(Files.isDirectory(gateway.repoDir("my-repo.v2").resolve("objects")));

    JsonArray listed = new JsonArray(gateway.api("GET", "/api/v1/repos", null, null).body());
    assertTrue(
        listed.stream()
            .map(JsonObject.class::cast)
            .anyMatch(
                r ->
                    r.getString("name").equals("my-repo.v2")
                        && r.getString("description").equals("A test")));

    assertEquals(401, gateway.api("DELETE", "/api/v1/repos/my-repo.v2", null, null).statusCode());
    assertEquals(
        204,
        gateway.api("DELETE", "/api/v1/repos/my-repo.v2", gateway.ownerToken, null).statusCode());
    assertFalse(Files.exists(gateway.repoDir("my-repo.v2")));
    assertEquals(
        404,
        gateway.api("DELETE", "/api/v1/repos/my-repo.v2", gateway.ownerToken, null).statusCode());
  }

  @Test
  void personalAccessTokensAreShownOnceStoredHashedAndRevocable() throws Exception {
    HttpResponse<String> created =
        gateway.api("POST", "/api/v1/tokens", gateway.ownerToken, "{\"label\":\"laptop\"}");
    assertEquals(201, created.statusCode(), created.body());
    JsonObject token = new JsonObject(created.body());
    String secret = token.getString("token");
    assertTrue(secret.startsWith("spbpat_"));

    String stored = Files.readString(gateway.dataDir.resolve("tokens.json"));
    assertFalse(stored.contains(secret), "only a hash is stored");
    assertFalse(stored.contains(gateway.ownerToken));
    String listing = gateway.api("GET", "/api/v1/tokens", secret, null).body();
    assertTrue(listing.contains("laptop"));
    assertFalse(listing.contains("spbpat_"), "listing never shows secrets");

    assertEquals(
        201,
        gateway.api("POST", "/api/v1/repos", secret, "{\"name\":\"by-new-token\"}").statusCode());
    assertEquals(
        204,
        gateway
            .api("DELETE", "/api/v1/tokens/" + token.getString("id"), gateway.ownerToken, null)
            .statusCode());
    assertEquals(
        401,
        gateway.api("POST", "/api/v1/repos", secret, "{\"name\":\"after-revoke\"}").statusCode());
    assertEquals(401, gateway.api("GET", "/api/v1/tokens", secret, null).statusCode());
  }
}
