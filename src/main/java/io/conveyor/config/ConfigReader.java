package io.conveyor.config;

import io.conveyor.model.Durations;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** Turns the merged JSON tree into typed records, checking every value and naming the key at fault. */
final class ConfigReader {
  static final Set<String> ROLES = Set.of("dequeue", "api", "reaper", "archive", "webhooks", "scheduler");
  /**
   * redis.partitions 0 (auto) in cluster mode: one per master of the smallest Redis Cluster. Each partition
   * costs its three leader roles a call a second even when idle, so more is a choice for bigger clusters.
   */
  static final int AUTO_CLUSTER_PARTITIONS = 3;
  private final JsonObject tree;

  private ConfigReader(JsonObject tree) {
    this.tree = tree;
  }

  static Config read(JsonObject tree) {
    ConfigReader r = new ConfigReader(tree);
    return new Config(
        r.redis(),
        new Config.Node(r.name("node.group"), r.roles("node.roles"), r.integer("node.workers", 1, 100_000),
            r.duration("node.idleWait", Duration.ofMillis(10)), r.duration("node.drainTime", Duration.ZERO),
            r.choice("node.compiler", Config.Compiler.class), r.integer("node.eventLoops", 0, 1024)),
        r.heartbeat(),
        new Config.Reaper(r.duration("reaper.interval", Duration.ofMillis(10)),
            r.lease("reaper.lease", "reaper.interval"), r.duration("reaper.grace", Duration.ZERO),
            r.duration("reaper.stuckGrace", Duration.ZERO), r.duration("reaper.stuckHeldAfter", Duration.ofSeconds(1)),
            r.integer("reaper.stuckBatch", 1, 10_000)),
        new Config.Http(r.integer("http.port", 0, 65535), r.text("http.host", false),
            r.integer("http.maxBodyBytes", 1024, 512 * 1024 * 1024), r.duration("http.maxWait", Duration.ZERO),
            r.integer("http.startRate", 1, 10_000_000), r.integer("http.startBurst", 1, 10_000_000),
            r.ownerNumbers("http.ownerStartRates", "starts per second", 10_000_000),
            r.duration("http.searchBudget", Duration.ofMillis(1))),
        new Config.Api(ApiKeysReader.read(r, "api.keys")),
        new Config.Bridge(r.integer("bridge.tcp.port", 0, 65535), r.text("bridge.tcp.host", false),
            r.stepAddresses("bridge.tcp.stepAddresses"), r.bool("bridge.sockjs.enabled")),
        new Config.Cluster(r.bool("cluster.enabled"), r.text("cluster.config", false), r.text("cluster.name", true),
            r.text("cluster.host", false)),
        new Config.Pipelines(r.text("pipelines.dir", false)),
        new Config.Transactions(r.duration("transactions.externalIdPeriod", Duration.ofSeconds(1)),
            r.duration("transactions.stepTimeout", Duration.ofMillis(1)),
            r.integer("transactions.maxMetadataBytes", 2, 64 * 1024 * 1024),
            r.integer("transactions.maxInputBytes", 2, 512 * 1024 * 1024),
            r.duration("transactions.priorityAging", Duration.ofMillis(9)),
            r.integer("transactions.ownerShare", 0, 1_000_000),
            r.ownerNumbers("transactions.ownerWeights", "weight", 1000)),
        r.archive(), WebhooksReader.read(r),
        new Config.Schedules(r.text("schedules.dir", true), r.duration("schedules.interval", Duration.ofMillis(10)),
            r.lease("schedules.lease", "schedules.interval"), r.duration("schedules.grace", Duration.ZERO),
            r.duration("schedules.redriveAfter", Duration.ofMillis(100)),
            r.duration("schedules.missAfter", Duration.ofMillis(100))),
        new Config.Metrics(r.bool("metrics.ownerLabels")),
        new Config.Tracing(r.bool("tracing.enabled"), r.name("tracing.serviceName")), r.logging(),
        new Config.Limits(r.integer("limits.maxDepth", 1, 10_000), r.integer("limits.maxDescendants", 1, 100_000_000),
            r.integer("limits.maxLive", 1, 1_000_000_000), r.integer("limits.maxPayloadBytes", 2, 512 * 1024 * 1024),
            r.integer("limits.maxErrors", 1, 10_000)),
        new Config.Events(r.duration("events.retention", Duration.ofSeconds(1))), SecurityReader.read(r),
        new Config.Audit(r.duration("audit.retention", Duration.ZERO), r.bool("audit.reads"),
            r.integer("audit.maxWaiting", 1, 10_000_000)));
  }

  /**
   * The redis section. redis.endpoints, when given, replaces redis.url (a url left at its default is
   * ignored; one set to something else that endpoints lack is a conflict). Embedded Redis is for standalone
   * mode only, and Sentinel needs the master's name.
   */
  Config.Redis redis() {
    Config.RedisMode mode = choice("redis.mode", Config.RedisMode.class);
    String url = redisUrl("redis.url");
    Object list = raw("redis.endpoints");
    if (!(list instanceof JsonArray given)) {
      throw bad("redis.endpoints", "a list of URLs like redis://host:6379");
    }
    List<String> endpoints = new ArrayList<>();
    for (int i = 0; i < given.size(); i++) {
      endpoints.add(redisUrl("redis.endpoints[" + i + "]", given.getValue(i)));
    }
    String defaultUrl = ConfigLoader.defaults().getJsonObject("redis").getString("url");
    if (endpoints.isEmpty()) {
      endpoints.add(url);
    } else if (!url.equals(defaultUrl) && !endpoints.contains(url)) {
      throw new ConfigException("config keys redis.url and redis.endpoints disagree (" + url + " is not among "
          + endpoints + "): set one of them");
    }
    if (mode == Config.RedisMode.STANDALONE && endpoints.size() > 1) {
      throw bad("redis.endpoints", "one URL in standalone mode (set redis.mode to cluster or sentinel for more)");
    }
    String masterName = text("redis.masterName", true);
    if (mode == Config.RedisMode.SENTINEL && masterName.isEmpty()) {
      throw bad("redis.masterName", "the name Sentinel knows the master by (sentinel monitor NAME …) in sentinel mode");
    }
    if (mode != Config.RedisMode.SENTINEL && !masterName.isEmpty()) {
      throw bad("redis.masterName", "empty unless redis.mode is sentinel");
    }
    Config.Embedded embedded = choice("redis.embedded", Config.Embedded.class);
    if (mode != Config.RedisMode.STANDALONE) {
      if (embedded == Config.Embedded.ALWAYS) {
        throw bad("redis.embedded", "auto or never in " + mode.name().toLowerCase(Locale.ROOT)
            + " mode (an embedded Redis is a single server)");
      }
      embedded = Config.Embedded.NEVER;
    }
    String prefix = prefix("redis.prefix");
    boolean hashTag = prefix.matches("[^{]*\\{[^}]+}.*");
    int partitions = integer("redis.partitions", 0, 1024);
    if (partitions == 0) {
      // auto: a Redis Cluster gets its load spread, unless the prefix puts every key in one slot
      partitions = mode == Config.RedisMode.CLUSTER && !hashTag ? AUTO_CLUSTER_PARTITIONS : 1;
    }
    if (partitions > 1 && (prefix.contains("{") || prefix.contains("}"))) {
      throw bad("redis.prefix", "no { or } with redis.partitions above 1 (each partition's keys carry a hash tag "
          + "of their own), e.g. conveyor:");
    }
    if (prefix.matches(".*\\{p\\d+-\\d+}.*")) {
      throw bad("redis.prefix", "no hash tag of the form {p<N>-<k>}: partitions' keys carry those");
    }
    if (partitions == 1 && mode == Config.RedisMode.CLUSTER && !hashTag) {
      throw bad("redis.prefix", "a hash tag in cluster mode with one partition, e.g. {conveyor}: (every "
          + "script's keys must share a slot), or redis.partitions above 1");
    }
    return new Config.Redis(mode, List.copyOf(endpoints), masterName, prefix, partitions, embedded,
        integer("redis.maxPipelined", 1, 10_000_000), duration("redis.timeout", Duration.ofMillis(100)),
        integer("redis.waitReplicas", 0, 100), duration("redis.waitTimeout", Duration.ofMillis(1)),
        RedisMemoryReader.read(this), new Config.PartitionHealth(duration("redis.partitionSuspectAfter",
        Duration.ofMillis(10)), duration("redis.partitionProbeTimeout", Duration.ofMillis(10)),
        duration("redis.partitionWait", Duration.ZERO)), linger("redis.linger"));
  }

  Config.Logging logging() {
    String format = text("logging.format", false);
    if (!format.equals("text") && !format.equals("json")) {
      throw bad("logging.format", "text or json");
    }
    return new Config.Logging(format);
  }

  Config.Archive archive() {
    String url = text("archive.url", true);
    if (!url.isEmpty() && !url.startsWith("h2:") && !url.startsWith("postgresql://")
        && !url.startsWith("postgres://")) {
      throw bad("archive.url", "empty (an embedded H2 file under data/), h2:PATH or postgresql://user@host:port/db");
    }
    Object table = raw("archive.table");
    if (!(table instanceof String t) || !t.matches("[a-z_][a-z0-9_]{0,47}")) {
      throw bad("archive.table", "a table name of lower-case letters, digits and '_' (at most 48)");
    }
    return new Config.Archive(url, duration("archive.delay", Duration.ZERO), lease("archive.lease", "archive.interval"), duration("archive.grace", Duration.ZERO), integer("archive.batchSize", 1, 100_000),
        duration("archive.interval", Duration.ofMillis(1)), duration("archive.maxBackoff", Duration.ofMillis(1)),
        duration("archive.timeout", Duration.ofMillis(10)), (String) table, duration("archive.retention", Duration.ZERO),
        duration("archive.lagWarning", Duration.ofSeconds(1)));
  }

  /** A leader renews its lease once per interval: the lease must outlast two, or it lapses between them. */
  Duration lease(String path, String intervalPath) {
    Duration lease = duration(path, Duration.ofMillis(100));
    Duration interval = duration(intervalPath, Duration.ofMillis(1));
    if (lease.compareTo(interval.multipliedBy(2)) < 0) {
      throw bad(path, "at least twice " + intervalPath + " (" + Durations.format(interval) + ")");
    }
    return lease;
  }

  /** The TTL must outlast a few beats, or a live node would look dead between two of them. */
  Config.Heartbeat heartbeat() {
    Duration interval = duration("heartbeat.interval", Duration.ofMillis(10));
    Duration ttl = duration("heartbeat.ttl", Duration.ofMillis(10));
    if (ttl.compareTo(interval.multipliedBy(2)) < 0) {
      throw bad("heartbeat.ttl", "at least twice heartbeat.interval (" + Durations.format(interval) + ")");
    }
    return new Config.Heartbeat(interval, ttl);
  }

  Object raw(String path) {
    String[] parts = path.split("\\.");
    JsonObject section = tree;
    for (int i = 0; i < parts.length - 1; i++) {
      section = section.getJsonObject(parts[i]);
    }
    return section.getValue(parts[parts.length - 1]);
  }

  ConfigException bad(String path, String expected) {
    return bad(path, expected, raw(path));
  }

  /** path may name a list entry (redis.endpoints[1]); the environment variable is the list's. */
  private static ConfigException bad(String path, String expected, Object got) {
    return new ConfigException("config key " + path + " (env " + ConfigLoader.envName(path.replaceAll("\\[\\d+]$", ""))
        + "): expected " + expected + ", got " + describe(got));
  }

  private static String describe(Object v) {
    return v instanceof String s ? "'" + MaskedUrl.of(s) + "'" : String.valueOf(v);
  }

  String text(String path, boolean mayBeEmpty) {
    Object v = raw(path);
    if (!(v instanceof String s) || (!mayBeEmpty && s.isBlank())) {
      throw bad(path, mayBeEmpty ? "a string" : "a non-empty string");
    }
    return s.trim();
  }

  String name(String path) {
    Object v = raw(path);
    if (!(v instanceof String s) || !s.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) {
      throw bad(path, "a name of letters, digits, '_', '.' or '-' (at most 64)");
    }
    return s;
  }

  String prefix(String path) {
    Object v = raw(path);
    if (!(v instanceof String s) || s.isEmpty() || s.length() > 100 || s.chars().anyMatch(Character::isWhitespace)) {
      throw bad(path, "a key prefix without spaces, e.g. conveyor: or {conveyor}: for Redis Cluster");
    }
    return s;
  }

  String redisUrl(String path) {
    return redisUrl(path, raw(path));
  }

  private String redisUrl(String path, Object value) {
    if (!(value instanceof String given) || given.isBlank()) {
      throw bad(path, "a URL like redis://host:6379 or redis://:password@host:6379/0", value);
    }
    String s = given.trim();
    try {
      URI uri = URI.create(s);
      if (("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme())) && uri.getHost() != null) {
        return s;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw bad(path, "a URL like redis://host:6379 or redis://:password@host:6379/0", value);
  }

  int integer(String path, int min, int max) {
    Object v = raw(path);
    try {
      long n = v instanceof Number num && num.doubleValue() == num.longValue() ? num.longValue()
          : Long.parseLong(((String) v).trim());
      if (n >= min && n <= max) {
        return (int) n;
      }
    } catch (ClassCastException | NumberFormatException e) {
      // reported below
    }
    throw bad(path, "a whole number from " + min + " to " + max);
  }

  String regex(String path) {
    String s = text(path, true);
    try {
      Pattern.compile(s);
      return s;
    } catch (PatternSyntaxException e) {
      throw bad(path, "a regular expression (" + e.getDescription() + ")");
    }
  }

  /**
   * The step addresses bridge clients may serve: a regular expression that matches no conveyor.* address (the API's
   * and the nodes' own, where keys travel). hitEnd after "conveyor." means some longer address could match.
   */
  String stepAddresses(String path) {
    String s = regex(path);
    Matcher m = Pattern.compile(s).matcher("conveyor.");
    if (m.matches() || m.hitEnd()) {
      throw bad(path, "a regular expression that matches no conveyor.* address (those are the nodes' own, and API "
          + "keys travel there), e.g. steps\\..+");
    }
    return s;
  }

  /** An object of owner → a whole number from 1 to max (what each number is, for the message). */
  Map<String, Integer> ownerNumbers(String path, String each, int max) {
    Object v = raw(path);
    if (!(v instanceof JsonObject o)) {
      throw bad(path, "an object of owner → " + each + ", e.g. {\"acme\": 3}");
    }
    Map<String, Integer> out = new HashMap<>();
    for (String owner : o.fieldNames()) {
      if (!(o.getValue(owner) instanceof Number n) || n.doubleValue() != n.intValue() || n.intValue() < 1
          || n.intValue() > max) {
        throw bad(path, "a whole number from 1 to " + max + " (" + each + ") for owner " + owner);
      }
      out.put(owner, n.intValue());
    }
    return Map.copyOf(out);
  }

  boolean bool(String path) {
    Object v = raw(path);
    if (v instanceof Boolean b) {
      return b;
    }
    if ("true".equals(v) || "false".equals(v)) {
      return Boolean.parseBoolean((String) v);
    }
    throw bad(path, "true or false");
  }

  Duration duration(String path, Duration min) {
    Object v = raw(path);
    try {
      Duration d = Durations.parse(v instanceof String s ? s : null);
      if (d.compareTo(min) >= 0) {
        return d;
      }
    } catch (IllegalArgumentException e) {
      // reported below
    }
    throw bad(path, Durations.FORM + (min.isZero() ? "" : ", at least " + Durations.format(min)));
  }

  /** redis.linger: 0 to 1 s (a longer one would hold every start and completion longer than a client waits). */
  Duration linger(String path) {
    Duration d = duration(path, Duration.ZERO);
    if (d.compareTo(Duration.ofSeconds(1)) > 0) {
      throw bad(path, Durations.FORM + ", at most 1s");
    }
    return d;
  }

  <E extends Enum<E>> E choice(String path, Class<E> type) {
    Object v = raw(path);
    List<String> names = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      String n = e.name().toLowerCase(Locale.ROOT);
      names.add(n);
      if (n.equals(v)) {
        return e;
      }
    }
    throw bad(path, "one of " + String.join(", ", names));
  }

  List<String> roles(String path) {
    Object v = raw(path);
    if (v instanceof JsonArray list && !list.isEmpty()) {
      List<String> roles = new ArrayList<>();
      for (Object o : list) {
        if (!(o instanceof String s) || !ROLES.contains(s)) {
          throw bad(path, "a list of roles from " + ROLES);
        }
        roles.add(s);
      }
      return List.copyOf(roles);
    }
    throw bad(path, "a non-empty list of roles from " + ROLES);
  }
}
