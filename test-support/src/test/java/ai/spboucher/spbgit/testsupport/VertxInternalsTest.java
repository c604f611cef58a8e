package ai.spboucher.spbgit.testsupport;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class VertxInternalsTest {

  @Test
  void recognisesInternalReferences() {
    for (String internal :
        List.of(
            "import io.vertx.core.net.impl.ConnectionBase;",
            "import io.vertx.core.internal.net.NetSocketInternal;",
            "((io.vertx.core.internal.ContextInternal) context)",
            "import io.vertx.openapi.validation.impl.RequestValidatorImpl;")) {
      assertTrue(VertxInternals.REFERENCE.matcher(internal).find(), internal);
    }
    for (String public_ :
        List.of(
            "import io.vertx.core.http.HttpConnection;",
            "import io.netty.channel.socket.DuplexChannel;",
            "import io.vertx.core.net.NetSocket;",
            "import ai.spboucher.spbgit.gateway.impl.Thing;")) {
      assertFalse(VertxInternals.REFERENCE.matcher(public_).find(), public_);
    }
  }
}
