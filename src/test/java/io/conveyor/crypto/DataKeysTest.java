package io.conveyor.crypto;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.redis.DataKeyStore;
import io.conveyor.testing.MutableTicker;
import io.conveyor.testing.ScriptTest;
import io.vertx.core.Future;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Owners' data keys against a real Redis: made once per owner whichever node asks first, stored only wrapped,
 * opened by every node with the master key, cached with a bound, and gone for good once shredded.
 */
class DataKeysTest extends ScriptTest {
  private static final String MARKER = "{\"card\":\"MARKER-4111\"}";
  private final byte[] master = random();
  private final MutableTicker ticker = new MutableTicker(0);

  private static byte[] random() {
    byte[] k = new byte[32];
    new SecureRandom().nextBytes(k);
    return k;
  }

  private DataKeyStore store() {
    return new DataKeyStore(h.store.context);
  }

  private DataKeys node(int cacheSize, byte[]... masters) {
    return new DataKeys(store(), new LocalKeyProvider(List.of(masters)), cacheSize, Duration.ofMinutes(5), ticker);
  }

  private Payloads payloads(DataKeys keys) {
    return new Payloads(new Config.Encryption(List.of("acme"), "base64:x", List.of(), 10, Duration.ofMinutes(5)),
        keys);
  }

  private Throwable failure(Future<?> f) {
    return f.transform(Future::succeededFuture).await().cause();
  }

  @Test
  void an_owners_first_seal_stores_its_key_wrapped_and_another_node_opens_what_it_sealed() {
    String sealed = payloads(node(10, master)).seal("acme", "tx-1", "input", MARKER).await();
    assertTrue(sealed.startsWith("sealed:v1:1:") && !sealed.contains("MARKER"), sealed);
    String record = cmd("HGET", store().dataKeysH(), "k:acme").toString();
    assertTrue(record.startsWith("1:" + LocalKeyProvider.idOf(master) + ":"), record);
    assertEquals(60, Base64.getDecoder().decode(record.split(":", 3)[2]).length, "IV, a wrapped 32-byte key, tag");
    assertEquals(MARKER, payloads(node(10, master)).open("acme", "tx-1", "input", sealed).await());
  }

  @Test
  void two_nodes_that_make_an_owners_key_at_once_end_with_the_same_key() {
    DataKeys a = node(10, master);
    DataKeys b = node(10, master);
    Future<DataKeys.DataKey> fa = a.forSealing("acme");
    Future<DataKeys.DataKey> fb = b.forSealing("acme");
    Future.all(fa, fb).await();
    assertEquals(1, fa.result().version());
    assertEquals(1, fb.result().version());
    assertEquals(Base64.getEncoder().encodeToString(fa.result().key().getEncoded()),
        Base64.getEncoder().encodeToString(fb.result().key().getEncoded()));
  }

  @Test
  void owners_without_encryption_and_values_that_are_not_sealed_pass_as_they_are() {
    Payloads p = payloads(node(10, master));
    assertEquals(MARKER, p.seal("globex", "tx-1", "input", MARKER).await());
    assertEquals(MARKER, p.open("acme", "tx-1", "input", MARKER).await());
    assertNull(p.seal("acme", "tx-1", "input", (String) null).await());
    assertNull(cmd("HGET", store().dataKeysH(), "k:globex"), "no key is made for an owner not sealed for");
  }

  @Test
  void a_node_without_the_master_key_cannot_open_and_one_that_keeps_it_as_previous_can() {
    String sealed = payloads(node(10, master)).seal("acme", "tx-1", "input", MARKER).await();
    byte[] next = random();
    Throwable e = failure(payloads(node(10, next)).open("acme", "tx-1", "input", sealed));
    assertInstanceOf(SealedException.class, e);
    assertTrue(e.getMessage().contains(LocalKeyProvider.idOf(master)), e.getMessage());
    assertEquals(MARKER, payloads(node(10, next, master)).open("acme", "tx-1", "input", sealed).await());
  }

  @Test
  void an_unknown_key_version_is_refused_as_sealed_naming_the_version() {
    String sealed = payloads(node(10, master)).seal("acme", "tx-1", "input", MARKER).await();
    String later = sealed.replace("sealed:v1:1:", "sealed:v1:7:");
    Throwable e = failure(payloads(node(10, master)).open("acme", "tx-1", "input", later));
    assertInstanceOf(SealedException.class, e);
    assertTrue(e.getMessage().contains("version 7"), e.getMessage());
  }

  @Test
  void once_a_key_is_gone_from_redis_what_it_sealed_stays_sealed_after_the_cache_time_and_a_new_key_takes_version_2() {
    DataKeys keys = node(10, master);
    String sealed = payloads(keys).seal("acme", "tx-1", "input", MARKER).await();
    cmd("HDEL", store().dataKeysH(), "k:acme"); // what a shred does in Redis (stage 3 adds the route and the event)
    assertEquals(MARKER, payloads(keys).open("acme", "tx-1", "input", sealed).await(), "cached for cacheTtl");
    ticker.advance(Duration.ofMinutes(5));
    assertInstanceOf(SealedException.class, failure(payloads(keys).open("acme", "tx-1", "input", sealed)));
    String again = payloads(keys).seal("acme", "tx-2", "input", MARKER).await();
    assertTrue(again.startsWith("sealed:v1:2:"), again);
    assertInstanceOf(SealedException.class, failure(payloads(keys).open("acme", "tx-1", "input", sealed)));
  }

  @Test
  void the_cache_holds_at_most_cache_size_owners_and_drops_the_least_recently_used() {
    DataKeys keys = node(1, master);
    keys.forSealing("acme").await();
    keys.forSealing("globex").await();
    cmd("HDEL", store().dataKeysH(), "k:acme", "k:globex");
    assertEquals(1, keys.forOpening("globex", 1).await().version(), "the one cached");
    assertInstanceOf(SealedException.class, failure(keys.forOpening("acme", 1)), "dropped: read again, and gone");
    assertFalse(cmd("HEXISTS", store().dataKeysH(), "k:acme").toBoolean());
  }

  @Test
  void a_rewrap_puts_every_data_key_under_the_new_master_key_and_what_they_sealed_still_opens_without_the_old() {
    String a = payloads(node(10, master)).seal("acme", "tx-1", "input", MARKER).await();
    node(10, master).forSealing("globex").await();
    byte[] next = random();
    LocalKeyProvider rotated = new LocalKeyProvider(List.of(next, master));
    io.vertx.core.json.JsonObject out = Rewrap.run(store(), rotated).await();
    assertEquals(LocalKeyProvider.idOf(next), out.getString("masterKey"));
    assertEquals(2, out.getInteger("rewrapped"), out.encode());
    assertTrue(out.getJsonArray("failed").isEmpty(), out.encode());
    String record = cmd("HGET", store().dataKeysH(), "k:acme").toString();
    assertTrue(record.startsWith("1:" + LocalKeyProvider.idOf(next) + ":"), "same version, new master: " + record);
    assertEquals(MARKER, payloads(node(10, next)).open("acme", "tx-1", "input", a).await(), "the old key is not needed");
    assertEquals(2, Rewrap.run(store(), rotated).await().getInteger("current"), "nothing left to re-wrap");
  }

  @Test
  void a_rewrap_without_the_old_master_key_names_the_owners_it_could_not_rewrap_and_changes_nothing_of_them() {
    node(10, master).forSealing("acme").await();
    String before = cmd("HGET", store().dataKeysH(), "k:acme").toString();
    io.vertx.core.json.JsonObject out = Rewrap.run(store(), new LocalKeyProvider(List.of(random()))).await();
    assertEquals("acme", out.getJsonArray("failed").getJsonObject(0).getString("owner"), out.encode());
    assertTrue(out.getJsonArray("failed").getJsonObject(0).getString("reason").contains("previousMasterKeys"));
    assertEquals(before, cmd("HGET", store().dataKeysH(), "k:acme").toString());
  }

  @Test
  void a_rewrap_never_brings_back_a_key_shredded_while_it_ran() {
    node(10, master).forSealing("acme").await();
    KeyRecords.Wrapped was = store().current("acme").await().key();
    cmd("HDEL", store().dataKeysH(), "k:acme");
    assertFalse(store().replace("acme", was, new KeyRecords.Wrapped(1, "mk-x", "AAAA")).await());
    assertNull(cmd("HGET", store().dataKeysH(), "k:acme"));
  }
}
