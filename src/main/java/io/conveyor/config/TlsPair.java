package io.conveyor.config;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.impl.KeyStoreHelper;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;

/**
 * A server's PEM certificate chain and private key (README, TLS), read and checked together: both parse, and the
 * key signs what the certificate's public key verifies, so a half-replaced pair is never served.
 */
public record TlsPair(byte[] cert, byte[] key, X509Certificate leaf) {

  /**
   * The pair the settings name, read and checked; one that cannot serve is a ConfigException naming the setting,
   * the file and what is wrong (a blocking read: at start, or off the event loop).
   */
  public static TlsPair load(Config.HttpTls tls) {
    return load("security.http.tls", tls.certFile(), tls.keyFile());
  }

  /** The pair a section's certFile and keyFile name (security.bus.tls, security.bridge.tls, …), read and checked. */
  public static TlsPair load(String section, String cert, String key) {
    Path certFile = Path.of(cert);
    Path keyFile = Path.of(key);
    try {
      return read(certFile, keyFile);
    } catch (BadPair e) {
      throw refusal(section + (e.file().equals(certFile) ? ".certFile" : ".keyFile"), e.getMessage());
    }
  }

  /** The ConfigException that names a setting, its environment variable and what is wrong with its file. */
  public static ConfigException refusal(String setting, String why) {
    return new ConfigException("config key " + setting + " (env " + ConfigLoader.envName(setting) + "): " + why);
  }

  /** The private key, parsed again from the checked bytes (to sign with). */
  public PrivateKey privateKey() {
    return privateKey(cert, key, Path.of("key"));
  }

  /** The signature algorithm for a key of the given algorithm (RSA, EC, Ed25519, …) with SHA-256 where it takes one. */
  public static String signatureAlgorithm(String keyAlgorithm) {
    return switch (keyAlgorithm) {
      case "RSA" -> "SHA256withRSA";
      case "EC" -> "SHA256withECDSA";
      default -> keyAlgorithm; // Ed25519, Ed448, EdDSA
    };
  }

  /** Reads both files; a pair that cannot serve throws a BadPair naming the file at fault and why. */
  public static TlsPair read(Path certFile, Path keyFile) {
    return of(bytes(certFile, "certificate"), bytes(keyFile, "key"), certFile, keyFile);
  }

  /** Checks a pair already read (the files' bytes), naming the files in a refusal. */
  public static TlsPair of(byte[] cert, byte[] key, Path certFile, Path keyFile) {
    X509Certificate leaf = certificate(cert, certFile);
    PrivateKey privateKey = privateKey(cert, key, keyFile);
    if (!signs(privateKey, leaf)) {
      throw new BadPair(keyFile, "the key in " + keyFile + " does not belong to the certificate in " + certFile
          + " (" + leaf.getSubjectX500Principal().getName() + ")");
    }
    return new TlsPair(cert, key, leaf);
  }

  /** What Vert.x serves: the pair as values, so a later change of the files never reaches a running server. */
  public PemKeyCertOptions options() {
    return new PemKeyCertOptions().setCertValue(Buffer.buffer(cert)).setKeyValue(Buffer.buffer(key));
  }

  /** The same bytes in both files (whatever the files' times say). */
  public boolean sameFiles(byte[] otherCert, byte[] otherKey) {
    return Arrays.equals(cert, otherCert) && Arrays.equals(key, otherKey);
  }

  /** For a log line: the subject, serial number and end of validity of the served certificate. */
  public String describe() {
    return leaf.getSubjectX500Principal().getName() + ", serial " + leaf.getSerialNumber().toString(16)
        + ", valid until " + leaf.getNotAfter().toInstant();
  }

  private static byte[] bytes(Path file, String what) {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new BadPair(file, "the " + what + " file " + file + " does not exist");
    } catch (AccessDeniedException e) {
      throw new BadPair(file, "the " + what + " file " + file + " cannot be read (permission denied)");
    } catch (IOException e) {
      throw new BadPair(file, "the " + what + " file " + file + " cannot be read (" + e.getMessage() + ")");
    }
  }

  private static X509Certificate certificate(byte[] pem, Path file) {
    String text = new String(pem, java.nio.charset.StandardCharsets.US_ASCII);
    if (!text.contains("-----BEGIN CERTIFICATE-----")) {
      throw new BadPair(file, "the certificate file " + file + " is not PEM (no -----BEGIN CERTIFICATE----- block)");
    }
    try {
      List<? extends java.security.cert.Certificate> chain = List.copyOf(
          CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem)));
      if (!chain.isEmpty() && chain.get(0) instanceof X509Certificate leaf) {
        return leaf;
      }
      throw new BadPair(file, "the certificate file " + file + " holds no X.509 certificate");
    } catch (GeneralSecurityException e) {
      throw new BadPair(file, "the certificate file " + file + " is not a PEM certificate (" + e.getMessage() + ")");
    }
  }

  /** Parsed as Vert.x will serve it (PKCS#8, PKCS#1 RSA or SEC1 EC); Vert.x reads values without a Vertx. */
  private static PrivateKey privateKey(byte[] cert, byte[] key, Path file) {
    String text = new String(key, java.nio.charset.StandardCharsets.US_ASCII);
    if (!text.matches("(?s).*-----BEGIN (RSA |EC )?PRIVATE KEY-----.*")) {
      throw new BadPair(file, "the key file " + file + " is not PEM (no -----BEGIN PRIVATE KEY----- block; an "
          + "encrypted key must be decrypted first: openssl pkey -in KEY -out KEY.pem)");
    }
    try {
      KeyStore store = new PemKeyCertOptions().setCertValue(Buffer.buffer(cert)).setKeyValue(Buffer.buffer(key))
          .loadKeyStore(null);
      String alias = store.aliases().nextElement();
      // Vert.x keeps the key under its own fixed password (an internal constant: a change breaks the build)
      return (PrivateKey) store.getKey(alias, KeyStoreHelper.DUMMY_PASSWORD.toCharArray());
    } catch (Exception e) {
      throw new BadPair(file, "the key file " + file + " holds no private key to serve the certificate with ("
          + e.getMessage() + ")");
    }
  }

  private static boolean signs(PrivateKey key, X509Certificate leaf) {
    String algorithm = signatureAlgorithm(key.getAlgorithm());
    try {
      byte[] probe = new byte[32];
      new SecureRandom().nextBytes(probe);
      Signature sign = Signature.getInstance(algorithm);
      sign.initSign(key);
      sign.update(probe);
      byte[] signature = sign.sign();
      Signature verify = Signature.getInstance(algorithm);
      verify.initVerify(leaf.getPublicKey());
      verify.update(probe);
      return verify.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /** A pair that cannot serve; the message names the file and what is wrong with it. */
  public static final class BadPair extends RuntimeException {
    private final Path file;

    BadPair(Path file, String message) {
      super(message);
      this.file = file;
    }

    /** The file at fault (the key's when the two do not belong together). */
    public Path file() {
      return file;
    }
  }
}
