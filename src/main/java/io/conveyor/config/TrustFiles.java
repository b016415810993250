package io.conveyor.config;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.util.List;

/**
 * The files a TLS client trusts and shows (TLS to Redis and PostgreSQL), read and checked at start: a file that
 * cannot be used stops the node with one line naming the setting and the file, before anything connects. Blocking
 * reads: call them at start or off the event loop.
 */
public final class TrustFiles {
  private TrustFiles() {
  }

  /** The CA certificates (PEM, one or more) in file, as Vert.x takes them (values, so the file is read once). */
  public static PemTrustOptions ca(String key, String file) {
    byte[] pem = checkedCa(key, file);
    return new PemTrustOptions().addCertValue(Buffer.buffer(pem));
  }

  /** Reads and checks a CA file: it holds PEM X.509 certificates. */
  public static byte[] checkedCa(String key, String file) {
    Path path = Path.of(file);
    byte[] pem;
    try {
      pem = Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      throw bad(key, "the CA file " + file + " does not exist");
    } catch (IOException e) {
      throw bad(key, "the CA file " + file + " cannot be read (" + e + ")");
    }
    if (!new String(pem, StandardCharsets.US_ASCII).contains("-----BEGIN CERTIFICATE-----")) {
      throw bad(key, "the CA file " + file + " is not PEM (no -----BEGIN CERTIFICATE----- block)");
    }
    try {
      List<?> certs = List.copyOf(CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(pem)));
      if (certs.isEmpty()) {
        throw bad(key, "the CA file " + file + " holds no X.509 certificate");
      }
    } catch (GeneralSecurityException e) {
      throw bad(key, "the CA file " + file + " is not a PEM certificate (" + e.getMessage() + ")");
    }
    return pem;
  }

  /** A client certificate and its key, checked to belong together (TlsPair), for mutual TLS. */
  public static PemKeyCertOptions clientPair(String certKey, String keyKey, String certFile, String keyFile) {
    try {
      return TlsPair.read(Path.of(certFile), Path.of(keyFile)).options();
    } catch (TlsPair.BadPair e) {
      throw bad(e.file().equals(Path.of(certFile)) ? certKey : keyKey, e.getMessage());
    }
  }

  private static ConfigException bad(String key, String what) {
    return new ConfigException("config key " + key + " (env " + ConfigLoader.envName(key) + "): " + what);
  }
}
