package io.conveyor.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.redis.RedisLink;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * security.redis.tls and security.archive.tls (README, TLS to Redis and PostgreSQL): the defaults, how the archive's
 * sslmode is resolved, and settings that could not apply, each refused with a line naming the key.
 */
class StoreTlsConfigTest {
  private static final String PG = "postgresql://conveyor@db.example:5432/conveyor";
  @TempDir
  Path dir;

  private static Config load(String... pairs) {
    Map<String, String> env = new HashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      env.put("CONVEYOR_" + pairs[i], pairs[i + 1]);
    }
    return ConfigLoader.load(null, env);
  }

  private static String refusal(String... pairs) {
    return assertThrows(ConfigException.class, () -> load(pairs)).getMessage();
  }

  @Test
  void by_default_both_stores_are_plain_and_verification_is_on_once_tls_is() {
    Config c = load();
    assertEquals(Config.RedisTls.DEFAULTS, c.security().redisTls());
    assertTrue(c.security().redisTls().verifyHostname());
    assertEquals(Config.ArchiveTls.DISABLED, c.security().archiveTls());
    assertEquals(Config.ArchiveTls.DISABLED, load("ARCHIVE_URL", PG).security().archiveTls());
  }

  @Test
  void the_archive_takes_verify_full_for_a_ca_file_and_otherwise_the_sslmode_of_its_url() {
    assertEquals(new Config.ArchiveTls(Config.PgSslMode.VERIFY_FULL, "/etc/ssl/pg-ca.pem"),
        load("ARCHIVE_URL", PG, "SECURITY_ARCHIVE_TLS_CA_FILE", "/etc/ssl/pg-ca.pem").security().archiveTls());
    assertEquals(Config.PgSslMode.REQUIRE, load("ARCHIVE_URL", PG + "?sslmode=require").security().archiveTls()
        .sslMode());
    assertEquals(Config.PgSslMode.VERIFY_CA, load("ARCHIVE_URL", PG, "SECURITY_ARCHIVE_TLS_SSL_MODE", "verify-ca")
        .security().archiveTls().sslMode());
    assertEquals(Config.PgSslMode.VERIFY_FULL, load("ARCHIVE_URL", PG + "?sslmode=verify-full",
        "SECURITY_ARCHIVE_TLS_SSL_MODE", "verify-full").security().archiveTls().sslMode(), "the same twice agrees");
  }

  @Test
  void archive_tls_settings_that_could_not_apply_are_refused_naming_the_key() {
    assertTrue(refusal("ARCHIVE_URL", PG, "SECURITY_ARCHIVE_TLS_SSL_MODE", "verify").startsWith(
        "config key security.archive.tls.sslMode (env CONVEYOR_SECURITY_ARCHIVE_TLS_SSL_MODE): expected auto, "
            + "disable, allow, prefer, require, verify-ca or verify-full"));
    assertTrue(refusal("SECURITY_ARCHIVE_TLS_SSL_MODE", "verify-full").contains("unless archive.url is "
        + "postgresql://"), "an H2 archive takes no TLS");
    assertTrue(refusal("ARCHIVE_URL", PG + "?sslmode=require", "SECURITY_ARCHIVE_TLS_SSL_MODE", "verify-full")
        .contains("disagree"));
    String unchecked = refusal("ARCHIVE_URL", PG, "SECURITY_ARCHIVE_TLS_SSL_MODE", "require",
        "SECURITY_ARCHIVE_TLS_CA_FILE", "/ca.pem");
    assertTrue(unchecked.startsWith("config key security.archive.tls.caFile") && unchecked.contains("verify-full"),
        unchecked);
    assertTrue(refusal("ARCHIVE_URL", PG + "?sslmode=verify-full&sslrootcert=/ca.pem").contains(
        "security.archive.tls.caFile"), "the CA is a setting, not a URL parameter the pool would send on");
    assertTrue(refusal("ARCHIVE_URL", PG + "?sslmode=on").startsWith("config key archive.url"));
  }

  @Test
  void redis_tls_settings_for_a_plain_url_or_a_mix_of_schemes_are_refused_naming_the_key() {
    assertTrue(refusal("SECURITY_REDIS_TLS_CA_FILE", "/ca.pem").startsWith("config key security.redis.tls.caFile "
        + "(env CONVEYOR_SECURITY_REDIS_TLS_CA_FILE): expected empty while redis.url is redis:// (plain)"));
    assertTrue(refusal("SECURITY_REDIS_TLS_VERIFY_HOSTNAME", "false").startsWith(
        "config key security.redis.tls.verifyHostname"));
    assertTrue(refusal("REDIS_URL", "rediss://r:6380", "SECURITY_REDIS_TLS_CERT_FILE", "/c.pem").startsWith(
        "config key security.redis.tls.keyFile"), "a client pair takes both files");
    assertTrue(refusal("REDIS_MODE", "cluster", "REDIS_PREFIX", "{c}:", "REDIS_ENDPOINTS",
        "rediss://a:6380,redis://b:6379").contains("all rediss:// (TLS) or all redis://"));
    assertTrue(refusal("REDIS_URL", "rediss://127.0.0.1:6380", "REDIS_EMBEDDED", "always").startsWith(
        "config key redis.embedded"), "an embedded Redis serves no TLS");
  }

  @Test
  void a_ca_file_that_is_missing_or_not_pem_stops_the_start_naming_the_setting() throws Exception {
    Path text = Files.writeString(dir.resolve("ca.txt"), "not a certificate");
    for (Path ca : new Path[] {dir.resolve("gone.pem"), text}) {
      Config c = load("REDIS_URL", "rediss://127.0.0.1:6380", "SECURITY_REDIS_TLS_CA_FILE", ca.toString());
      String m = assertThrows(ConfigException.class, () -> RedisLink.options(c.redis(), c.security().redisTls()))
          .getMessage();
      assertTrue(m.startsWith("config key security.redis.tls.caFile (env CONVEYOR_SECURITY_REDIS_TLS_CA_FILE): the "
          + "CA file " + ca), m);
    }
  }
}
