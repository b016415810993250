package io.conveyor.bench.chaos;

import com.hazelcast.config.FileSystemXmlConfig;
import io.conveyor.BusTrust;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The suite's own member of the cluster: it serves the pipeline's eventbus step (counting every
 * execution with its idempotency key, replying after a pause so nodes have work in flight), hosts the webhook receiver, and speaks
 * HTTP to the nodes' API (HTTPS with --tls; the receiver stays plain HTTP: a node trusts only the JVM's CAs there).
 */
final class Driver {
  static final String STEP_ADDRESS = "steps.chaos";

  /** An HTTP answer: status (0 when the request failed before one came) and body. */
  record Reply(int status, String body) {
    boolean ok() {
      return status >= 200 && status < 300;
    }

    JsonObject json() {
      try {
        return new JsonObject(body);
      } catch (RuntimeException e) {
        return new JsonObject();
      }
    }
  }

  final Executions executions = new Executions();
  /** Webhook deliveries by webhook-id (the txId for a completion). */
  final Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
  private final Vertx vertx;
  private final HazelcastClusterManager manager;
  private final HttpClient http;
  private final String apiKey;
  private final int receiverPort;
  private HttpServer receiver;
  /** Connections to each node at most. */
  private static final int MAX_CONNECTIONS = 2048;

  private Driver(Vertx vertx, HazelcastClusterManager manager, String apiKey, int receiverPort, ChaosTls tls) {
    this.vertx = vertx;
    this.manager = manager;
    this.apiKey = apiKey;
    this.receiverPort = receiverPort;
    HttpClientOptions options = new HttpClientOptions().setKeepAlive(true).setConnectTimeout(2000).setIdleTimeout(5);
    if (tls != null) {
      options.setSsl(true).setTrustOptions(new PemTrustOptions().addCertPath(tls.ca().toString()));
    }
    // enough connections that a request never waits for one: with 64 a node, starts held 2 s by a partition that
    // was failing over took every connection, and the healthy partitions' starts queued behind them in the
    // driver's own pool (their DURING p99 was the pool's 4 s, not the node's)
    this.http = vertx.createHttpClient(options, new PoolOptions().setHttp1MaxSize(MAX_CONNECTIONS));
  }

  /** Joins the cluster with the run's Hazelcast config and serves the step and the receiver. */
  static Driver start(Path clusterXml, String clusterName, String apiKey, int receiverPort, int stepMillis)
      throws Exception {
    return start(clusterXml, clusterName, apiKey, receiverPort, stepMillis, null);
  }

  /**
   * The same; with tls (not null) the driver calls the nodes over HTTPS trusting the run's CA, and joins the bus on
   * mutual TLS with a pair of its own, attested as the nodes are (BusTrust), or no node would route to it.
   */
  static Driver start(Path clusterXml, String clusterName, String apiKey, int receiverPort, int stepMillis,
                      ChaosTls tls) throws Exception {
    com.hazelcast.config.Config hz = new FileSystemXmlConfig(clusterXml.toString());
    hz.setClusterName(clusterName);
    HazelcastClusterManager manager = new HazelcastClusterManager(hz);
    VertxOptions options = new VertxOptions();
    ClusterManager bus = manager;
    if (tls != null) {
      BusTrust trust = tls.driverTrust();
      trust.secure(options.getEventBusOptions().setHost("127.0.0.1"));
      bus = trust.attested(manager);
    }
    Vertx vertx = Vertx.builder().with(options).withClusterManager(bus).buildClustered().await();
    Runnable undo = Teardown.add(() -> vertx.close().await());
    Driver d = new Driver(vertx, manager, apiKey, receiverPort, tls);
    d.undo = undo;
    d.serveSteps(stepMillis);
    d.startReceiver();
    return d;
  }

  private Runnable undo;

  private void serveSteps(int stepMillis) {
    vertx.eventBus().<Object>consumer(STEP_ADDRESS, m -> {
      executions.record(m.headers().get("txId"), Integer.parseInt(m.headers().get("step")),
          Long.parseLong(m.headers().get("attempt")), m.headers().get("node"), m.headers().get("idempotencyKey"));
      JsonObject reply = new JsonObject().put("output", m.body() instanceof JsonObject j ? j : new JsonObject());
      if (stepMillis == 0) {
        m.reply(reply);
      } else {
        vertx.setTimer(stepMillis, t -> m.reply(reply));
      }
    }).completion().await();
  }

  /** The receiver answers 200 at once and counts each delivery by webhook-id. */
  void startReceiver() {
    receiver = vertx.createHttpServer().requestHandler(req -> req.body().onComplete(b -> {
      String id = req.getHeader("webhook-id");
      if (id != null) {
        deliveries.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      }
      req.response().setStatusCode(200).end();
    })).listen(receiverPort, "127.0.0.1").await();
  }

  /** Closes the receiver's port: deliveries are refused until startReceiver. */
  void stopReceiver() {
    receiver.close().await();
  }

  String webhookUrl() {
    return "http://127.0.0.1:" + receiverPort + "/hook";
  }

  /** This member's view of the cluster (nodes plus the driver). */
  int members() {
    return manager.getNodes().size();
  }

  /** One API call to a node; failures (refused, timed out) come back as status 0, never as a failed Future. */
  Future<Reply> call(int port, HttpMethod method, String uri, JsonObject body, long timeoutMs) {
    return call(port, method, uri, body, timeoutMs, apiKey);
  }

  /** The same with another tenant's API key. */
  Future<Reply> call(int port, HttpMethod method, String uri, JsonObject body, long timeoutMs, String key) {
    RequestOptions o = new RequestOptions().setMethod(method).setHost("127.0.0.1").setPort(port).setURI(uri)
        .putHeader("Authorization", "Bearer " + key).setConnectTimeout(Math.min(timeoutMs, 2000))
        .setIdleTimeout(timeoutMs);
    if (body != null) {
      o.putHeader("content-type", "application/json");
    }
    return http.request(o).compose(req -> (body == null ? req.send() : req.send(Buffer.buffer(body.encode())))
            .compose(resp -> resp.body().map(b -> new Reply(resp.statusCode(), b.toString()))))
        .otherwise(e -> new Reply(0, String.valueOf(e.getMessage())));
  }

  Vertx vertx() {
    return vertx;
  }

  void close() {
    undo.run();
  }
}
