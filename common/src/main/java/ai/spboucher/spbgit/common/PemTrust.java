package ai.spboucher.spbgit.common;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS that trusts exactly the certificates of one PEM file (a private CA), for the connections
 * between the product's own nodes: NATS ({@code SPB_NATS_CA}) and a runner's git relay to the
 * gateway ({@code SPB_GATEWAY_CA}). Reading the file blocks.
 */
public final class PemTrust {

  private PemTrust() {}

  /** A TLS 1.2+ context whose only trust anchors are the certificates in {@code caFile}. */
  public static SSLContext sslContext(Path caFile) throws IOException, GeneralSecurityException {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(caFile)) {
      int i = 0;
      for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trust.setCertificateEntry("ca-" + i++, cert);
      }
      if (i == 0) {
        throw new GeneralSecurityException("no certificate in " + caFile);
      }
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }
}
