package io.conveyor.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.TestCerts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * security.http.tls: both files or neither (the config), each readable PEM and the key the certificate's (what a
 * node that serves them checks before it starts, TlsPair.load); a refusal names the key and the file.
 */
class TlsConfigTest {
  private static final String CERT = "CONVEYOR_SECURITY_HTTP_TLS_CERT_FILE";
  private static final String KEY = "CONVEYOR_SECURITY_HTTP_TLS_KEY_FILE";
  @TempDir
  Path dir;

  private static String refusal(String... envPairs) {
    Map<String, String> env = new HashMap<>();
    for (int i = 0; i < envPairs.length; i += 2) {
      env.put(envPairs[i], envPairs[i + 1]);
    }
    return assertThrows(ConfigException.class, () -> TlsPair.load(ConfigLoader.load(null, env).security().httpTls()))
        .getMessage();
  }

  @Test
  void tls_is_off_by_default_and_on_with_a_certificate_and_its_key() {
    Config.HttpTls off = ConfigLoader.load(null, Map.of()).security().httpTls();
    assertFalse(off.enabled());
    assertEquals(Duration.ofSeconds(10), off.reloadInterval());
    TestCerts.Pair pair = new TestCerts(dir).server("node", "node");
    Config.HttpTls on = ConfigLoader.load(null, Map.of(CERT, pair.cert().toString(), KEY, pair.key().toString()))
        .security().httpTls();
    assertTrue(on.enabled());
    assertEquals(pair.cert().toString(), on.certFile());
    assertEquals("CN=node", TlsPair.load(on).leaf().getSubjectX500Principal().getName());
  }

  @Test
  void one_file_without_the_other_names_the_missing_key() {
    String noKey = refusal(CERT, "/etc/conveyor/cert.pem");
    assertTrue(noKey.startsWith("config key security.http.tls.keyFile (env " + KEY + "): expected the path of a PEM"),
        noKey);
    String noCert = refusal(KEY, "/etc/conveyor/key.pem");
    assertTrue(noCert.startsWith("config key security.http.tls.certFile (env " + CERT + ")"), noCert);
  }

  @Test
  void a_missing_file_one_that_is_not_pem_and_a_key_of_another_certificate_name_the_key_and_the_file()
      throws IOException {
    TestCerts certs = new TestCerts(dir);
    TestCerts.Pair one = certs.server("one", "one");
    TestCerts.Pair two = certs.server("two", "two");
    Path gone = dir.resolve("gone.pem");
    String missing = refusal(CERT, gone.toString(), KEY, one.key().toString());
    assertEquals("config key security.http.tls.certFile (env " + CERT + "): the certificate file " + gone
        + " does not exist", missing);
    Path text = certs.write("text.key", "not a key\n");
    String notPem = refusal(CERT, one.cert().toString(), KEY, text.toString());
    assertTrue(notPem.startsWith("config key security.http.tls.keyFile (env " + KEY + "): the key file " + text
        + " is not PEM"), notPem);
    String certAsKey = refusal(CERT, one.key().toString(), KEY, one.key().toString());
    assertTrue(certAsKey.contains("security.http.tls.certFile") && certAsKey.contains("is not PEM"), certAsKey);
    String mismatch = refusal(CERT, one.cert().toString(), KEY, two.key().toString());
    assertEquals("config key security.http.tls.keyFile (env " + KEY + "): the key in " + two.key()
        + " does not belong to the certificate in " + one.cert() + " (CN=one)", mismatch);
    Path unreadable = Files.copy(one.key(), dir.resolve("locked.key"));
    if (unreadable.toFile().setReadable(false) && !Files.isReadable(unreadable)) { // root reads anything
      String locked = refusal(CERT, one.cert().toString(), KEY, unreadable.toString());
      assertTrue(locked.contains("the key file " + unreadable + " cannot be read"), locked);
    }
  }

  @Test
  void the_config_alone_reads_no_file_so_the_command_line_needs_no_access_to_the_key() {
    Config.HttpTls tls = ConfigLoader.load(null, Map.of(CERT, "/nowhere/cert.pem", KEY, "/nowhere/key.pem"))
        .security().httpTls();
    assertEquals("/nowhere/key.pem", tls.keyFile());
  }

  @Test
  void the_reload_interval_takes_a_duration_of_at_least_100ms() {
    String fast = refusal("CONVEYOR_SECURITY_HTTP_TLS_RELOAD_INTERVAL", "10ms");
    assertTrue(fast.startsWith("config key security.http.tls.reloadInterval"), fast);
    assertTrue(fast.contains("at least 100ms"), fast);
  }
}
