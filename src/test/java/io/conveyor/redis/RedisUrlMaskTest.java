package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import io.conveyor.config.MaskedUrl;
import java.util.Map;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** Messages that name the Redis URL never show its password (review finding 7). */
class RedisUrlMaskTest {
  private static Config.Redis redis(String url) {
    return ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_URL", url, "CONVEYOR_REDIS_EMBEDDED", "never")).redis();
  }

  @Test
  void a_password_in_a_url_is_shown_as_stars_and_a_url_without_one_is_unchanged() {
    assertEquals("redis://:***@host:6379/0", MaskedUrl.of("redis://:s3cret@host:6379/0"));
    assertEquals("rediss://app:***@host:6380", MaskedUrl.of("rediss://app:pa:ss@host:6380"));
    assertEquals("postgresql://u:***@db/x", MaskedUrl.of("postgresql://u:pw@db/x"));
    assertEquals("redis://host:6379/0", MaskedUrl.of("redis://host:6379/0"));
    assertEquals("redis://user@host:6379", MaskedUrl.of("redis://user@host:6379"));
  }

  @Test
  void redis_unreachable_and_a_failed_tls_handshake_name_the_url_without_its_password() {
    Config.Redis plain = redis("redis://:s3cret@127.0.0.1:1/0");
    String down = TlsToRedis.unreachable(plain, new IllegalStateException("connection refused")).getMessage();
    String handshake = TlsToRedis.unreachable(redis("rediss://:s3cret@127.0.0.1:1/0"),
        new IllegalStateException("wrapped", new SSLHandshakeException("PKIX path building failed"))).getMessage();
    for (String m : new String[] {down, handshake}) {
      assertFalse(m.contains("s3cret"), m);
      assertTrue(m.contains(":***@127.0.0.1:1/0"), m);
    }
  }
}
