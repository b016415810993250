package io.conveyor.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Every setting of a node, typed and validated; read once at start by {@link ConfigLoader}. */
public record Config(Redis redis, Node node, Heartbeat heartbeat, Reaper reaper, Http http, Api api, Bridge bridge,
                     Cluster cluster, Pipelines pipelines, Transactions transactions, Archive archive,
                     Webhooks webhooks, Schedules schedules, Metrics metrics, Tracing tracing, Logging logging,
                     Limits limits, Events events, Security security, Audit audit) {

  /**
   * The audit log of admin acts (README, Audit log): entries older than retention are pruned (zero keeps them
   * forever); reads also records the admin routes that only read (GET), which the dashboard polls; maxWaiting is how
   * many entries wait in Redis (auditX) for the archive at most (past it the oldest go, counted as lost).
   */
  public record Audit(Duration retention, boolean reads, int maxWaiting) {
  }

  /**
   * Security settings (README, TLS): TLS on the HTTP listener, mutual TLS on the clustered bus, the TCP bridge's TLS,
   * TLS to Redis and a PostgreSQL archive, and sealed payloads (README, Encryption at rest).
   */
  public record Security(HttpTls httpTls, BusTls busTls, BridgeTls bridgeTls, RedisTls redisTls,
                         ArchiveTls archiveTls, Encryption encryption) {
  }

  /**
   * Mutual TLS on the clustered event bus (docs/cluster.md): the node's PEM pair, signed by the cluster CA, and the
   * CA. All three or none. With them, bus connections need a certificate the CA signed both ways, and messages are
   * routed only to members that prove one (an attestation in their node info); on conveyor.* addresses only to
   * members whose certificate's subject CN matches nodeSubject (a regular expression), the Conveyor nodes.
   */
  public record BusTls(String certFile, String keyFile, String caFile, String nodeSubject) {
    /** The default of security.bus.tls.nodeSubject: the node-… names of the README's certificates. */
    public static final String NODE_SUBJECT = "node-.*";

    /** A program of yours on the cluster: the node rule is the default. */
    public BusTls(String certFile, String keyFile, String caFile) {
      this(certFile, keyFile, caFile, NODE_SUBJECT);
    }

    public boolean enabled() {
      return !certFile.isEmpty();
    }
  }

  /**
   * TLS on the TCP event-bus bridge: a PEM pair of its own, else the HTTP listener's when that is set, else none
   * (plain TCP). Read once when the bridge starts. section names the settings the files came from, for a refusal.
   */
  public record BridgeTls(String certFile, String keyFile, String section) {
    public boolean enabled() {
      return !certFile.isEmpty();
    }
  }

  /**
   * TLS to Redis (README, TLS to Redis and PostgreSQL), on when redis.url (or every endpoint) is rediss://. The
   * server's certificate is always verified: against caFile (PEM, one or more CAs) or, when empty, the JVM's trust
   * store; and, unless verifyHostname is off, it must name the host dialled. certFile and keyFile: a client pair
   * for mutual TLS, both or neither.
   */
  public record RedisTls(String caFile, String certFile, String keyFile, boolean verifyHostname) {
    public static final RedisTls DEFAULTS = new RedisTls("", "", "", true);
    public static final String CA_FILE = "security.redis.tls.caFile";
    public static final String CERT_FILE = "security.redis.tls.certFile";
    public static final String KEY_FILE = "security.redis.tls.keyFile";
    public static final String VERIFY_HOSTNAME = "security.redis.tls.verifyHostname";

    public boolean clientPair() {
      return !certFile.isEmpty();
    }
  }

  /** libpq's sslmode values, as the PostgreSQL archive takes them (README, TLS to Redis and PostgreSQL). */
  public enum PgSslMode {
    DISABLE, ALLOW, PREFER, REQUIRE, VERIFY_CA, VERIFY_FULL;

    /** The name libpq, pgjdbc and the Vert.x client know it by (verify-full). */
    public String value() {
      return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    /** Whether the server's certificate is checked against a CA (and, for verify-full, its name). */
    public boolean verifies() {
      return this == VERIFY_CA || this == VERIFY_FULL;
    }
  }

  /**
   * TLS to a PostgreSQL archive: sslMode resolved from security.archive.tls.sslMode and the URL's sslmode
   * (verify-full when a caFile is given and neither names one); caFile: the CA (PEM) the server's certificate
   * must chain to, or empty for the JVM's trust store.
   */
  public record ArchiveTls(PgSslMode sslMode, String caFile) {
    public static final ArchiveTls DISABLED = new ArchiveTls(PgSslMode.DISABLE, "");
    public static final String SSL_MODE = "security.archive.tls.sslMode";
    public static final String CA_FILE = "security.archive.tls.caFile";
  }

  /**
   * Encryption at rest per owner (README, Encryption at rest): the owners whose payloads are sealed ("*": all;
   * none: off), where the master key comes from (base64:, file: or env:), older master keys kept only to unwrap
   * data keys not yet re-wrapped, how many unwrapped data keys a verticle caches and for how long, and the
   * metadata fields kept in clear beside the sealed metadata so a search finds them (searchableMetadata).
   */
  public record Encryption(List<String> owners, String masterKey, List<String> previousMasterKeys, int cacheSize,
                           Duration cacheTtl, List<String> searchableMetadata) {
    public static final String MASTER_KEY = "security.encryption.masterKey";
    public static final String PREVIOUS_MASTER_KEYS = "security.encryption.previousMasterKeys";
    public static final Encryption OFF = new Encryption(List.of(), "", List.of(), 1000, Duration.ofMinutes(5));

    /** No metadata field kept clear for search. */
    public Encryption(List<String> owners, String masterKey, List<String> previousMasterKeys, int cacheSize,
                      Duration cacheTtl) {
      this(owners, masterKey, previousMasterKeys, cacheSize, cacheTtl, List.of());
    }

    public boolean enabled() {
      return !owners.isEmpty();
    }

    /** Whether an owner's payloads are sealed. */
    public boolean sealsFor(String owner) {
      return owner != null && (owners.contains("*") || owners.contains(owner));
    }
  }

  /**
   * TLS on the HTTP listener (API, dashboard, /metrics, /health, SockJS): a PEM certificate chain and its key, both
   * or neither (plain HTTP). Every reloadInterval the files are read again; a changed pair that checks is served
   * to new connections from then on, a bad one is logged and the pair served before stays.
   */
  public record HttpTls(String certFile, String keyFile, Duration reloadInterval) {
    public boolean enabled() {
      return !certFile.isEmpty();
    }
  }

  /** Business events (flow/await): how long an event no step took, and what a step was given, are kept. */
  public record Events(Duration retention) {
  }

  public enum Embedded { AUTO, ALWAYS, NEVER }

  /** node.compiler: C2 switched off on two processors or fewer (auto), always (c1), or left as the JVM started (jvm). */
  public enum Compiler { AUTO, C1, JVM }

  /** How Redis is reached: one server, a Redis Cluster, or a master found through Sentinel. */
  public enum RedisMode { STANDALONE, CLUSTER, SENTINEL }

  /**
   * Where state lives. endpoints: the server (standalone), seed nodes (cluster) or sentinels (sentinel);
   * url is the first of them. masterName names the Sentinel master. maxPipelined bounds the commands
   * waiting for replies on one connection; a command with no reply within timeout fails and its
   * connection is replaced. waitReplicas above 0: a start or completion is answered only once that many
   * replicas have it (WAIT, up to waitTimeout), so a failover cannot drop it. partitions: how many hash-tag
   * partitions the keyspace is split into (fixed when it is made; see Keys). memory: the memory guard. linger:
   * how long a node's batch of starts or completions that finds no call out waits for more (0: none; see Batcher).
   */
  public record Redis(RedisMode mode, List<String> endpoints, String masterName, String prefix, int partitions,
                      Embedded embedded, int maxPipelined, Duration timeout, int waitReplicas,
                      Duration waitTimeout, RedisMemory memory, PartitionHealth partitionHealth, Duration linger) {
    /** The settings before the linger (none). */
    public Redis(RedisMode mode, List<String> endpoints, String masterName, String prefix, int partitions,
                 Embedded embedded, int maxPipelined, Duration timeout, int waitReplicas, Duration waitTimeout,
                 RedisMemory memory, PartitionHealth partitionHealth) {
      this(mode, endpoints, masterName, prefix, partitions, embedded, maxPipelined, timeout, waitReplicas, waitTimeout,
          memory, partitionHealth, Duration.ZERO);
    }

    /** The settings before partition health (its defaults). */
    public Redis(RedisMode mode, List<String> endpoints, String masterName, String prefix, int partitions,
                 Embedded embedded, int maxPipelined, Duration timeout, int waitReplicas, Duration waitTimeout,
                 RedisMemory memory) {
      this(mode, endpoints, masterName, prefix, partitions, embedded, maxPipelined, timeout, waitReplicas, waitTimeout,
          memory, PartitionHealth.DEFAULTS);
    }

    /** The settings before the memory guard (its defaults). */
    public Redis(RedisMode mode, List<String> endpoints, String masterName, String prefix, int partitions,
                 Embedded embedded, int maxPipelined, Duration timeout, int waitReplicas, Duration waitTimeout) {
      this(mode, endpoints, masterName, prefix, partitions, embedded, maxPipelined, timeout, waitReplicas, waitTimeout,
          RedisMemory.DEFAULTS);
    }

    /** The first endpoint: the server in standalone mode. */
    public String url() {
      return endpoints.get(0);
    }
  }

  /**
   * The Redis memory guard (README, Redis memory): every interval each node reads used_memory of the master of
   * each partition against budget (bytes; 0: the server's maxmemory; neither: no guard). At highWater (a
   * fraction) new starts are refused with 503 redis-memory until it is below lowWater again.
   */
  public record RedisMemory(double highWater, double lowWater, long budget, Duration interval) {
    public static final RedisMemory DEFAULTS = new RedisMemory(0.85, 0.75, 0, Duration.ofSeconds(1));
  }

  /**
   * Partition health (README, Partition bulkheads): a call out past suspectAfter makes its partition suspect; each
   * partition is probed every second with probeTimeout; a start bound to a failing partition waits up to wait for it,
   * then answers 503 partition-unavailable (waitFor: redis.partitionWait).
   */
  public record PartitionHealth(Duration suspectAfter, Duration probeTimeout, Duration waitFor) {
    public static final PartitionHealth DEFAULTS = new PartitionHealth(Duration.ofMillis(250), Duration.ofMillis(500),
        Duration.ofSeconds(2));
  }

  /**
   * What this node serves: its group, its roles, and how many transactions it runs at once. eventLoops: Vert.x's
   * event loop threads (0: one per processor; Vert.x's own default is two per processor).
   */
  public record Node(String group, List<String> roles, int workers, Duration idleWait, Duration drainTime,
                     Compiler compiler, int eventLoops) {
    public boolean has(String role) {
      return roles.contains(role);
    }

    /** The event loop threads to make: eventLoops, or one per processor the JVM sees when it is 0. */
    public int eventLoopThreads() {
      return eventLoops > 0 ? eventLoops : Runtime.getRuntime().availableProcessors();
    }
  }

  /** A node rewrites its heartbeat key every interval; the key expires after ttl unless rewritten. */
  public record Heartbeat(Duration interval, Duration ttl) {
  }

  /**
   * The reaper leader looks for dead nodes every interval; leadership is a lease (plus grace) in Redis. Once per
   * 5 s stats slot it also looks for stuck work (README, Stuck work): stuckGrace past a step's timeout or a wake
   * time, stuckHeldAfter held back by a limit, stuckBatch transactions looked at per place and call.
   */
  public record Reaper(Duration interval, Duration lease, Duration grace, Duration stuckGrace,
                       Duration stuckHeldAfter, int stuckBatch) {
  }

  /**
   * The HTTP API (on nodes with the api role; port 0 leaves it off). ownerStartRates overrides startRate for
   * the owners it names (the burst scales with it). searchBudget: how long one page of the transaction search
   * may walk before it answers what it has (partial, with a cursor); the CLI's list keeps it too.
   */
  public record Http(int port, String host, int maxBodyBytes, Duration maxWait, int startRate, int startBurst,
                     java.util.Map<String, Integer> ownerStartRates, Duration searchBudget) {
    /** The settings before searchBudget (its default, one second). */
    public Http(int port, String host, int maxBodyBytes, Duration maxWait, int startRate, int startBurst,
                java.util.Map<String, Integer> ownerStartRates) {
      this(port, host, maxBodyBytes, maxWait, startRate, startBurst, ownerStartRates, Duration.ofSeconds(1));
    }

    public int startRate(String owner) {
      return ownerStartRates.getOrDefault(owner, startRate);
    }

    public int startBurst(String owner) {
      Integer own = ownerStartRates.get(owner);
      return own == null ? startBurst : (int) Math.max(1, (long) startBurst * own / startRate);
    }
  }

  /** An API key as config holds it: the SHA-256 of the key (hex), never the key itself, and what it may do. */
  public record ApiKey(String sha256, String owner, List<String> roles) {
  }

  public record Api(List<ApiKey> keys) {
  }

  /**
   * The event-bus bridges: TCP (port 0 leaves it off) and SockJS at /eventbus on the HTTP API's port (when
   * sockjs). Bridge clients may serve steps at stepAddresses (both bridges).
   */
  public record Bridge(int tcpPort, String tcpHost, String stepAddresses, boolean sockjs) {
    public Bridge(int tcpPort, String tcpHost, String stepAddresses) {
      this(tcpPort, tcpHost, stepAddresses, true);
    }
  }

  /** name overrides the cluster name of the Hazelcast file when not empty (e.g. one per test run). */
  public record Cluster(boolean enabled, String config, String name, String host) {
  }

  public record Pipelines(String dir) {
  }

  /**
   * Schedules: the directory of schedule files published at start, how often the scheduler leader looks for
   * due fires, its lease and grace, how long a fire may stay in the purgatory before a leader drives it again,
   * and how late a fire time may be before it counts as missed (its schedule's catchUp decides then).
   */
  public record Schedules(String dir, Duration interval, Duration lease, Duration grace, Duration redriveAfter,
                          Duration missAfter) {
  }

  /**
   * Limits and periods of transactions; stepTimeout applies where a pipeline gives none. ownerShare: how many of one owner's starts wait in a group's in-queue at once (times the owner's
   * weight, ownerWeights, default 1); the rest wait in the owner's own queue and move up one for each of
   * the owner's taken, so owners with work take turns. 0 turns fair share off.
   */
  public record Transactions(Duration externalIdPeriod, Duration stepTimeout, int maxMetadataBytes,
                             int maxInputBytes, Duration priorityAging, int ownerShare,
                             java.util.Map<String, Integer> ownerWeights) {
    public Transactions(Duration externalIdPeriod, Duration stepTimeout, int maxMetadataBytes, int maxInputBytes,
                        Duration priorityAging) {
      this(externalIdPeriod, stepTimeout, maxMetadataBytes, maxInputBytes, priorityAging, 0, java.util.Map.of());
    }

    /** An owner's share of a group's in-queue: ownerShare × its weight; 0 when fair share is off. */
    public int shareOf(String owner) {
      return ownerShare * ownerWeights.getOrDefault(owner, 1);
    }

    /** The head start one priority level gives in a group's in-queue (ms): priorityAging / 9. */
    public long priorityStepMillis() {
      return priorityAging.toMillis() / 9;
    }
  }

  /**
   * The archive: where (url; empty = embedded H2), how long a finished transaction stays in Redis first
   * (delay), the leader's lease and grace, the batch size, the idle poll interval, the longest wait between
   * retries of a failed write, how long a write may take before it counts as failed, and the table.
   */
  public record Archive(String url, Duration delay, Duration lease, Duration grace, int batchSize, Duration interval,
                        Duration maxBackoff, Duration timeout, String table, Duration retention, Duration lagWarning) {
    /** The default of archive.lagWarning: readiness says the archive lags once its oldest due entry waited this long. */
    public static final Duration LAG_WARNING = Duration.ofMinutes(5);

    /** The settings before lagWarning (its default). */
    public Archive(String url, Duration delay, Duration lease, Duration grace, int batchSize, Duration interval,
                   Duration maxBackoff, Duration timeout, String table, Duration retention) {
      this(url, delay, lease, grace, batchSize, interval, maxBackoff, timeout, table, retention, LAG_WARNING);
    }

    /** The settings before retention (kept forever: retention zero). */
    public Archive(String url, Duration delay, Duration lease, Duration grace, int batchSize, Duration interval,
                   Duration maxBackoff, Duration timeout, String table) {
      this(url, delay, lease, grace, batchSize, interval, maxBackoff, timeout, table, Duration.ZERO);
    }
  }

  /**
   * Webhook delivery: the signing secret (whsec_…, and per-owner ones), the retry schedule (initialDelay ×
   * factor^n, capped at maxDelay, at most maxAttempts), the request timeout, deliveries at once, which
   * targets are allowed, the per-URL failure limit within a window and the pause it causes, the leader's
   * poll interval, lease and grace, and how long a transaction whose metadata says pollReplyCancelsWebhook
   * waits before its first attempt.
   */
  public record Webhooks(String secret, Map<String, String> ownerSecrets, Duration initialDelay, double factor,
                         Duration maxDelay, int maxAttempts, Duration timeout, int concurrency,
                         boolean allowPrivateTargets, List<String> allowHosts, int failureLimit, Duration failureWindow,
                         Duration pause, Duration interval, Duration lease, Duration grace, Duration pollGrace) {

    /** The secret an owner's webhooks are signed with ("" when none is configured). */
    public String secretFor(String owner) {
      return ownerSecrets.getOrDefault(owner, secret);
    }
  }

  /** /metrics: whether counters carry an owner label (off by default: owners may be many). */
  public record Metrics(boolean ownerLabels) {
  }

  /**
   * OpenTelemetry tracing: off unless enabled (then the exporter, its endpoint and sampling come from the
   * standard OTEL_* variables, OTLP by default); serviceName is the default of OTEL_SERVICE_NAME.
   */
  public record Tracing(boolean enabled, String serviceName) {
  }

  /** Log lines: text (for people) or json (one JSON object per line, for collectors). */
  public record Logging(String format) {
  }

  /**
   * What one transaction, tree or tenant may take of what all share (README, Limits). maxDepth: nested
   * children and branches below a root; maxDescendants: transactions one root may create in all; maxLive:
   * live (not yet ended) transactions per owner; maxPayloadBytes: a step's output (JSON bytes); maxErrors:
   * error entries one transaction keeps (older ones are summarised). Owners may have their own maxLive and
   * maxPayloadBytes (PUT /api/v1/admin/owners/{owner}).
   */
  public record Limits(int maxDepth, int maxDescendants, int maxLive, int maxPayloadBytes, int maxErrors) {
    /** The defaults of conf/config.json. */
    public static final Limits DEFAULTS = new Limits(32, 10_000, 100_000, 1_048_576, 20);
  }
}
