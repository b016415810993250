package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A test CA and server certificates for 127.0.0.1 and localhost, made by the openssl binary in a directory of
 * the test's: the commands README's TLS section shows. Each certificate has a random serial and the CN asked for.
 */
public final class TestCerts {
  private final Path dir;

  /** Makes the CA (ca.pem, ca.key) in dir. */
  public TestCerts(Path dir) {
    this.dir = dir;
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=conveyor-test-ca", "-keyout", "ca.key", "-out", "ca.pem");
    write("server.ext", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  }

  /** The CA's certificate, which clients trust. */
  public Path ca() {
    return dir.resolve("ca.pem");
  }

  /** A server key and certificate signed by the CA: NAME.key and NAME.pem, with subject CN=cn. */
  public Pair server(String name, String cn) {
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=" + cn,
        "-keyout", name + ".key", "-out", name + ".csr");
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-days", "2",
        "-set_serial", Long.toString(ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE)),
        "-extfile", "server.ext", "-out", name + ".pem");
    return new Pair(dir.resolve(name + ".pem"), dir.resolve(name + ".key"));
  }

  /** A TLS context that trusts the test CA alone (for java.net clients: sockets, java.net.http). */
  public javax.net.ssl.SSLContext trusting() {
    try (java.io.InputStream in = Files.newInputStream(ca())) {
      java.security.KeyStore trusted = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
      trusted.load(null, null);
      trusted.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509")
          .generateCertificate(in));
      javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
          javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trusted);
      javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A certificate file and its key file. */
  public record Pair(Path cert, Path key) {
  }

  /** Writes a file in the directory. */
  public Path write(String name, String text) {
    try {
      return Files.writeString(dir.resolve(name), text, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void openssl(String... args) {
    List<String> command = new java.util.ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run openssl (is it installed?)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
