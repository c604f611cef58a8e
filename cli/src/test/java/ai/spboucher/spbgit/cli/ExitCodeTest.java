package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.cli.api.ApiClient;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import org.junit.jupiter.api.Test;

class ExitCodeTest {

  @Test
  void statusesMapToDocumentedCodes() {
    assertEquals(ExitCode.FAILED, ExitCode.forStatus(400));
    assertEquals(ExitCode.AUTH, ExitCode.forStatus(401));
    assertEquals(ExitCode.AUTH, ExitCode.forStatus(403));
    assertEquals(ExitCode.NOT_FOUND, ExitCode.forStatus(404));
    assertEquals(ExitCode.CONFLICT, ExitCode.forStatus(409));
    assertEquals(ExitCode.FAILED, ExitCode.forStatus(413));
    assertEquals(ExitCode.UNAVAILABLE, ExitCode.forStatus(500));
    assertEquals(ExitCode.UNAVAILABLE, ExitCode.forStatus(503));
  }

  @Test
  void gatewayErrorsKeepTheGatewaysMessage() {
    CliException notFound = ApiClient.failureOf(404, "{\"error\":\"no job x in repository demo\"}");
    assertEquals(ExitCode.NOT_FOUND, notFound.exitCode());
    assertEquals("no job x in repository demo", notFound.getMessage());
    CliException unauthenticated =
        ApiClient.failureOf(401, "{\"error\":\"invalid or revoked token\"}");
    assertEquals(ExitCode.AUTH, unauthenticated.exitCode());
    assertTrue(unauthenticated.getMessage().contains("spbgit login"), unauthenticated.getMessage());
    CliException proxy = ApiClient.failureOf(502, "<html>Bad Gateway</html>");
    assertEquals(ExitCode.UNAVAILABLE, proxy.exitCode());
    assertEquals("gateway error (HTTP 502): the gateway answered HTTP 502", proxy.getMessage());
  }

  @Test
  void unreachableGatewayIsUnavailable() {
    ApiClient api = new ApiClient("http://127.0.0.1:9", null);
    CliException refused = api.failureOf(new ConnectException());
    assertEquals(ExitCode.UNAVAILABLE, refused.exitCode());
    assertEquals(
        "cannot reach the gateway at http://127.0.0.1:9: connection refused", refused.getMessage());
    assertEquals(
        ExitCode.UNAVAILABLE, api.failureOf(new HttpTimeoutException("timed out")).exitCode());
  }
}
