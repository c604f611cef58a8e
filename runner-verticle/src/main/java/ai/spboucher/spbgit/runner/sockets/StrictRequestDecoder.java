package ai.spboucher.spbgit.runner.sockets;

import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;
import io.netty.handler.codec.http.HttpMessage;

/**
 * Vert.x's request decoder, refusing a request that declares both {@code Transfer-Encoding: chunked} and a
 * {@code Content-Length}. Netty would drop the length and read chunks (RFC 9112 allows that); a job's socket
 * refuses the request instead, because two parties reading its framing differently is how a request is smuggled.
 * The request then reaches the server's invalid-request handler, which answers 400.
 */
final class StrictRequestDecoder extends VertxHttpRequestDecoder {

  StrictRequestDecoder(HttpServerOptions options) {
    super(options);
  }

  @Override
  protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
    throw new IllegalArgumentException("both Transfer-Encoding and Content-Length");
  }
}
