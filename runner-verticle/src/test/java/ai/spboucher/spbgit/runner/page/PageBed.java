package ai.spboucher.spbgit.runner.page;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.testsupport.NatsServer;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;

/**
 * What the page tests that play the runner themselves share: NATS, a gateway connected to it, a
 * NATS connection for the test to publish a runner's events on ({@code RunnerStandIn}), and
 * headless Chromium signed in as the owner. Closed in the reverse order.
 */
final class PageBed implements AutoCloseable {

  final NatsServer nats;
  final TestGateway gateway;
  final Connection runner;
  final Browser browser;

  private PageBed(NatsServer nats, TestGateway gateway, Connection runner, Browser browser) {
    this.nats = nats;
    this.gateway = gateway;
    this.runner = runner;
    this.browser = browser;
  }

  /**
   * Starts it all under {@code tmp}; {@code gatewayConfig} is the gateway's configuration beyond
   * its NATS URL.
   */
  static PageBed start(Path tmp, JsonObject gatewayConfig) throws Exception {
    Browser.requireChromium();
    NatsServer nats = NatsServer.start(tmp.resolve("nats"));
    TestGateway gateway = null;
    Connection runner = null;
    try {
      gateway =
          TestGateway.start(tmp.resolve("data"), gatewayConfig.copy().put("natsUrl", nats.url()));
      runner = Nats.connect(nats.url());
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (gateway.api("GET", "/readyz", null, null).statusCode() != 200) {
        assertTrue(System.nanoTime() < deadline, "the gateway did not connect to NATS");
        Thread.sleep(100);
      }
      Browser browser = Browser.start(tmp.resolve("chromium"), gateway.baseUrl);
      browser.signIn(gateway.ownerToken, "/agent-jobs");
      return new PageBed(nats, gateway, runner, browser);
    } catch (Exception | Error e) {
      new PageBed(nats, gateway, runner, null).close();
      throw e;
    }
  }

  @Override
  public void close() throws Exception {
    if (browser != null) {
      browser.close();
    }
    if (runner != null) {
      runner.close();
    }
    if (gateway != null) {
      gateway.close();
    }
    nats.close();
  }
}
