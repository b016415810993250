package io.conveyor.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Durations;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
  @TempDir
  Path dir;

  @Test
  void the_shipped_file_is_the_defaults() {
    Config c = ConfigLoader.load(Path.of("conf/config.json"), Map.of());
    assertEquals(ConfigLoader.load(null, Map.of()), c);
    assertEquals("redis://127.0.0.1:6379", c.redis().url());
    assertEquals("conveyor:", c.redis().prefix());
    assertEquals(Config.Embedded.AUTO, c.redis().embedded());
    assertEquals(Duration.ofHours(6), c.transactions().externalIdPeriod());
    assertEquals(Duration.ofSeconds(60), c.archive().delay());
    assertEquals(Config.Compiler.AUTO, c.node().compiler());
    assertEquals(Config.Compiler.JVM, ConfigLoader.load(null, Map.of("CONVEYOR_NODE_COMPILER", "jvm")).node().compiler());
    String refused = assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_NODE_COMPILER",
        "c2"))).getMessage();
    assertTrue(refused.contains("node.compiler") && refused.contains("c1"), refused);
    assertEquals(0, c.node().eventLoops());
    assertEquals(Runtime.getRuntime().availableProcessors(), c.node().eventLoopThreads());
    assertEquals(3, ConfigLoader.load(null, Map.of("CONVEYOR_NODE_EVENT_LOOPS", "3")).node().eventLoopThreads());
    String negative = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_NODE_EVENT_LOOPS", "-1"))).getMessage();
    assertTrue(negative.contains("node.eventLoops") && negative.contains("0 to 1024"), negative);
  }

  @Test
  void redis_modes_take_their_endpoints_from_a_comma_list_and_refuse_what_cannot_work() {
    Config.Redis standalone = ConfigLoader.load(null, Map.of()).redis();
    assertEquals(Config.RedisMode.STANDALONE, standalone.mode());
    assertEquals(List.of("redis://127.0.0.1:6379"), standalone.endpoints());
    assertEquals(0, standalone.waitReplicas());
    assertEquals(Duration.ZERO, standalone.linger());
    assertEquals(Duration.ofMillis(2), ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_LINGER", "2ms")).redis().linger());
    String tooLong = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_LINGER", "2s"))).getMessage();
    assertTrue(tooLong.contains("redis.linger") && tooLong.contains("at most 1s"), tooLong);
    String typo = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_LINGER", "2mss"))).getMessage();
    assertTrue(typo.contains("redis.linger"), typo);

    Config.Redis cluster = ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MODE", "cluster",
        "CONVEYOR_REDIS_ENDPOINTS", "redis://10.0.0.1:7000, redis://10.0.0.2:7000", "CONVEYOR_REDIS_PREFIX", "{cv}:",
        "CONVEYOR_REDIS_WAIT_REPLICAS", "1")).redis();
    assertEquals(List.of("redis://10.0.0.1:7000", "redis://10.0.0.2:7000"), cluster.endpoints());
    assertEquals("redis://10.0.0.1:7000", cluster.url());
    assertEquals(Config.Embedded.NEVER, cluster.embedded(), "auto means never: an embedded Redis is one server");
    assertEquals(1, cluster.waitReplicas());

    Config.Redis sentinel = ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MODE", "sentinel",
        "CONVEYOR_REDIS_ENDPOINTS", "redis://s1:26379,redis://s2:26379", "CONVEYOR_REDIS_MASTER_NAME", "main")).redis();
    assertEquals("main", sentinel.masterName());

    Map<String, String> refused = Map.of(
        "CONVEYOR_REDIS_MODE", "clustered",
        "CONVEYOR_REDIS_ENDPOINTS", "redis://a:1,redis://b:2", // two servers in standalone mode
        "CONVEYOR_REDIS_MASTER_NAME", "main"); // a master name outside sentinel mode
    for (Map.Entry<String, String> e : refused.entrySet()) {
      ConfigException bad = assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of(e.getKey(),
          e.getValue())), e.getKey());
      assertTrue(bad.getMessage().contains("(env " + e.getKey() + ")"), bad.getMessage());
    }
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MODE",
        "sentinel", "CONVEYOR_REDIS_ENDPOINTS", "redis://s1:26379"))).getMessage().contains("redis.masterName"));
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MODE",
        "cluster", "CONVEYOR_REDIS_ENDPOINTS", "redis://a:7000", "CONVEYOR_REDIS_PARTITIONS", "1"))).getMessage()
        .contains("hash tag"));
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_PARTITIONS",
        "4", "CONVEYOR_REDIS_PREFIX", "{cv}:"))).getMessage().contains("no { or }"));
    // auto: a cluster's keyspace is split unless its prefix is one hash tag; one server's is not
    assertEquals(3, ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MODE", "cluster")).redis().partitions());
    assertEquals(1, cluster.partitions());
    assertEquals(1, standalone.partitions());
    assertEquals(4, ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_PARTITIONS", "4")).redis().partitions());
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MODE",
        "cluster", "CONVEYOR_REDIS_PREFIX", "{cv}:", "CONVEYOR_REDIS_EMBEDDED", "always"))).getMessage()
        .contains("redis.embedded"));
    ConfigException endpoint = assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of(
        "CONVEYOR_REDIS_MODE", "cluster", "CONVEYOR_REDIS_PREFIX", "{cv}:", "CONVEYOR_REDIS_ENDPOINTS",
        "redis://a:7000,a:7001")));
    assertTrue(endpoint.getMessage().startsWith("config key redis.endpoints[1] (env CONVEYOR_REDIS_ENDPOINTS)"),
        endpoint.getMessage());
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_URL",
        "redis://x:1", "CONVEYOR_REDIS_ENDPOINTS", "redis://y:1"))).getMessage().contains("disagree"));
  }

  @Test
  void the_stuck_look_has_its_defaults_and_refuses_a_batch_of_none_and_a_held_threshold_under_a_second() {
    Config.Reaper r = ConfigLoader.load(null, Map.of()).reaper();
    assertEquals(Duration.ofMinutes(1), r.stuckGrace());
    assertEquals(Duration.ofMinutes(15), r.stuckHeldAfter());
    assertEquals(500, r.stuckBatch());
    ConfigException batch = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REAPER_STUCK_BATCH", "0")));
    assertTrue(batch.getMessage().startsWith("config key reaper.stuckBatch (env CONVEYOR_REAPER_STUCK_BATCH)"),
        batch.getMessage());
    ConfigException held = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REAPER_STUCK_HELD_AFTER", "10ms")));
    assertTrue(held.getMessage().contains("reaper.stuckHeldAfter"), held.getMessage());
  }

  @Test
  void partition_health_has_its_defaults_and_refuses_a_value_that_is_no_duration_or_too_short() {
    Config.PartitionHealth h = ConfigLoader.load(null, Map.of()).redis().partitionHealth();
    assertEquals(Config.PartitionHealth.DEFAULTS, h);
    assertEquals(new Config.PartitionHealth(Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(2)), h);
    assertEquals(Duration.ZERO, ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_PARTITION_WAIT", "0ms")).redis()
        .partitionHealth().waitFor());
    ConfigException wait = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_PARTITION_WAIT", "soon")));
    assertTrue(wait.getMessage().startsWith("config key redis.partitionWait (env CONVEYOR_REDIS_PARTITION_WAIT)"),
        wait.getMessage());
    ConfigException probe = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_PARTITION_PROBE_TIMEOUT", "1ms")));
    assertTrue(probe.getMessage().contains("redis.partitionProbeTimeout") && probe.getMessage().contains("at least 10ms"),
        probe.getMessage());
    ConfigException suspect = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_PARTITION_SUSPECT_AFTER", "")));
    assertTrue(suspect.getMessage().contains("redis.partitionSuspectAfter"), suspect.getMessage());
  }

  @Test
  void env_names_are_the_path_in_upper_snake_case_with_camel_case_words_split() {
    assertEquals("CONVEYOR_REDIS_URL", ConfigLoader.envName("redis.url"));
    assertEquals("CONVEYOR_NODE_GROUP", ConfigLoader.envName("node.group"));
    assertEquals("CONVEYOR_ARCHIVE_BATCH_SIZE", ConfigLoader.envName("archive.batchSize"));
    assertEquals("CONVEYOR_TRANSACTIONS_EXTERNAL_ID_PERIOD", ConfigLoader.envName("transactions.externalIdPeriod"));
  }

  @Test
  void environment_variables_override_the_file_and_lists_are_comma_separated() throws IOException {
    Path file = dir.resolve("c.json");
    Files.writeString(file, "{\"node\":{\"group\":\"from-file\",\"workers\":7}}");
    Config c = ConfigLoader.load(file, Map.of("CONVEYOR_NODE_GROUP", "payments", "CONVEYOR_NODE_ROLES", "dequeue, api",
        "CONVEYOR_TRANSACTIONS_EXTERNAL_ID_PERIOD", "90m", "CONVEYOR_CLUSTER_ENABLED", "false"));
    assertEquals("payments", c.node().group());
    assertEquals(7, c.node().workers());
    assertEquals(List.of("dequeue", "api"), c.node().roles());
    assertEquals(Duration.ofMinutes(90), c.transactions().externalIdPeriod());
    assertEquals(false, c.cluster().enabled());
  }

  @Test
  void a_bad_value_names_the_key_its_env_name_and_the_expected_form_in_one_line() {
    ConfigException e = assertThrows(ConfigException.class,
        () -> ConfigLoader.load(null, Map.of("CONVEYOR_NODE_IDLE_WAIT", "soon")));
    assertTrue(e.getMessage().startsWith("config key node.idleWait (env CONVEYOR_NODE_IDLE_WAIT): expected a whole "
        + "number with a unit"), e.getMessage());
    assertTrue(e.getMessage().endsWith("got 'soon'"), e.getMessage());
    assertEquals(1, e.getMessage().lines().count());
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_NODE_WORKERS", "0")));
    ConfigException typo = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_URLL", "redis://127.0.0.1:6379")));
    assertTrue(typo.getMessage().startsWith("environment variable CONVEYOR_REDIS_URLL names no setting (did you mean "
        + "CONVEYOR_REDIS_URL?)"), typo.getMessage());
    assertEquals(Map.of("acme", 100, "globex", 50), ConfigLoader.load(null,
        Map.of("CONVEYOR_HTTP_OWNER_START_RATES", "acme=100, globex=50", "CONVEYOR_TEST_ANYTHING", "x")).http()
        .ownerStartRates());
    io.conveyor.config.Config.Transactions fair = ConfigLoader.load(null, Map.of("CONVEYOR_TRANSACTIONS_OWNER_WEIGHTS",
        "acme=3")).transactions();
    assertEquals(300, fair.shareOf("acme"));
    assertEquals(100, fair.shareOf("globex"), "weight 1 and the default share");
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_TRANSACTIONS_OWNER_WEIGHTS", "acme=0"))).getMessage()
        .contains("a whole number from 1 to 1000 (weight) for owner acme"));
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_NODE_ROLES", "dequeue,x")));
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_URL", "localhost")));
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_EMBEDDED", "maybe")));
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_CLUSTER_ENABLED", "yes")));
  }

  @Test
  void the_memory_guard_takes_two_fractions_low_below_high_a_budget_of_a_mebibyte_or_more_and_an_interval() {
    Config.RedisMemory d = ConfigLoader.load(null, Map.of()).redis().memory();
    assertEquals(new Config.RedisMemory(0.85, 0.75, 0, Duration.ofSeconds(1)), d);
    Config.RedisMemory set = ConfigLoader.load(null, Map.of("CONVEYOR_REDIS_MEMORY_HIGH_WATER", "0.9",
        "CONVEYOR_REDIS_MEMORY_LOW_WATER", "0.6", "CONVEYOR_REDIS_MEMORY_BUDGET", "1073741824",
        "CONVEYOR_REDIS_MEMORY_CHECK_INTERVAL", "250ms")).redis().memory();
    assertEquals(new Config.RedisMemory(0.9, 0.6, 1L << 30, Duration.ofMillis(250)), set);
    ConfigException crossed = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_MEMORY_LOW_WATER", "0.9")));
    assertTrue(crossed.getMessage().startsWith("config key redis.memoryLowWater (env CONVEYOR_REDIS_MEMORY_LOW_WATER): "
        + "expected a fraction below redis.memoryHighWater (0.85)"), crossed.getMessage());
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_MEMORY_HIGH_WATER", "85"))).getMessage().contains("e.g. 0.85 for 85 %"));
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_REDIS_MEMORY_BUDGET", "1000"))).getMessage().contains("at least 1048576 (1 MiB)"));
  }

  @Test
  void archive_settings_are_checked_a_lease_must_outlast_two_rounds_and_the_url_must_name_a_known_store() {
    Config c = ConfigLoader.load(null, Map.of());
    assertEquals(new Config.Archive("", Duration.ofSeconds(60), Duration.ofSeconds(2), Duration.ofSeconds(1), 1000,
        Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofSeconds(30), "conveyor_transactions", Duration.ofDays(90)),
        c.archive());
    assertTrue(c.node().has("archive"));
    ConfigException lease = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_ARCHIVE_LEASE", "1s")));
    assertTrue(lease.getMessage().contains("archive.lease") && lease.getMessage().contains("twice archive.interval"),
        lease.getMessage());
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_REAPER_LEASE", "1s")));
    ConfigException url = assertThrows(ConfigException.class, () -> ConfigLoader.load(null,
        Map.of("CONVEYOR_ARCHIVE_URL", "mysql://db/x")));
    assertTrue(url.getMessage().contains("postgresql://"), url.getMessage());
    assertThrows(ConfigException.class, () -> ConfigLoader.load(null, Map.of("CONVEYOR_ARCHIVE_TABLE", "x; drop")));
  }

  @Test
  void an_unknown_key_in_the_file_stops_the_node_naming_it() throws IOException {
    Path file = dir.resolve("typo.json");
    Files.writeString(file, "{\"node\":{\"wrokers\":7}}");
    ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(file, Map.of()));
    assertTrue(e.getMessage().contains("unknown key node.wrokers"), e.getMessage());
    Files.writeString(file, "{not json");
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(file, Map.of())).getMessage()
        .contains("not a JSON object"));
  }

  @Test
  void durations_take_a_unit_and_format_to_the_shortest_exact_text() {
    assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
    assertEquals(Duration.ofDays(1), Durations.parse("1d"));
    for (String s : List.of("500ms", "90s", "5m", "6h", "2d", "1500ms")) {
      assertEquals(s, Durations.format(Durations.parse(s)));
    }
    assertEquals("1m", Durations.format(Durations.parse("60s")));
    assertThrows(IllegalArgumentException.class, () -> Durations.parse("60"));
    assertThrows(IllegalArgumentException.class, () -> Durations.parse("-1s"));
  }

  @Test
  void api_keys_come_as_hashed_entries_from_a_file_or_as_owner_role_key_from_the_environment() throws IOException {
    Path file = dir.resolve("keys.json");
    String hash = ApiKeyHash.of("from-file");
    Files.writeString(file, "{\"api\":{\"keys\":[{\"owner\":\"acme\",\"roles\":[\"client\"],\"sha256\":\""
        + hash + "\"}]}}");
    assertEquals(List.of(new Config.ApiKey(hash, "acme", List.of("client"))),
        ConfigLoader.load(file, Map.of()).api().keys());
    Config fromEnv = ConfigLoader.load(null, Map.of("CONVEYOR_API_KEYS", "acme:client+admin:s3cret, ops:admin:x"));
    assertEquals(new Config.ApiKey(ApiKeyHash.of("s3cret"), "acme", List.of("client", "admin")),
        fromEnv.api().keys().get(0));
    ConfigException bad = assertThrows(ConfigException.class,
        () -> ConfigLoader.load(null, Map.of("CONVEYOR_API_KEYS", "acme:root:top-secret")));
    assertTrue(bad.getMessage().startsWith("config key api.keys[0]: roles must be from"), bad.getMessage());
    assertTrue(!bad.getMessage().contains("top-secret"), "the message shows the key");
    ConfigException shape = assertThrows(ConfigException.class,
        () -> ConfigLoader.load(null, Map.of("CONVEYOR_API_KEYS", "just-a-key-no-owner")));
    assertTrue(!shape.getMessage().contains("just-a-key"), "the message shows the key");
  }

  @Test
  void an_owner_may_have_a_start_rate_of_its_own() throws IOException {
    Path file = dir.resolve("rates.json");
    Files.writeString(file, "{\"http\":{\"startRate\":100,\"startBurst\":200,\"ownerStartRates\":{\"acme\":10}}}");
    Config.Http http = ConfigLoader.load(file, Map.of()).http();
    assertEquals(10, http.startRate("acme"));
    assertEquals(20, http.startBurst("acme"));
    assertEquals(100, http.startRate("globex"));
    Files.writeString(file, "{\"http\":{\"ownerStartRates\":{\"acme\":0}}}");
    assertTrue(assertThrows(ConfigException.class, () -> ConfigLoader.load(file, Map.of())).getMessage()
        .startsWith("config key http.ownerStartRates"));
  }
}
