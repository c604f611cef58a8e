package ai.spboucher.spbgit.system.page;

import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.testsupport.NatsServer;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;

/**
 * What the page tests that play the runner themselves share: a {@link Stack} of NATS and a gateway
 * connected to it, a NATS connection for the test to publish a runner's events on ({@code
 * RunnerStandIn}), and headless Chromium signed in as the owner. Closed in the reverse order.
 */
final class PageBed implements AutoCloseable {

  final Stack stack;
  final NatsServer nats;
  final TestGateway gateway;
  final Connection runner;
  final Browser browser;

  private PageBed(Stack stack, Browser browser) throws Exception {
    this.stack = stack;
    this.nats = stack.nats();
    this.gateway = stack.gateway(TestGateway.class);
    this.runner = stack.natsConnection();
    this.browser = browser;
  }

  /**
   * Starts it all under {@code tmp}; {@code gatewayConfig} is the gateway's configuration beyond
   * its NATS URL.
   */
  static PageBed start(Path tmp, JsonObject gatewayConfig) throws Exception {
    Browser.requireChromium();
    Stack stack = Stack.builder(tmp).nats().gateway(gatewayConfig).start();
    Browser browser = null;
    try {
      browser = Browser.start(tmp.resolve("chromium"), stack.gateway().baseUrl());
      browser.signIn(stack.gateway().ownerToken(), "/agent-jobs");
      return new PageBed(stack, browser);
    } catch (Exception | Error e) {
      if (browser != null) {
        browser.close();
      }
      stack.close();
      throw e;
    }
  }

  @Override
  public void close() throws Exception {
    try {
      browser.close();
    } finally {
      stack.close();
    }
  }
}
