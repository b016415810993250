package io.conveyor.queue;

import static io.conveyor.testing.TestRedis.cmd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.bus.Addresses;
import io.conveyor.domain.Transactions;
import io.conveyor.model.TxStatus;
import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cancel walks a tree of any size with no recursion in Lua and no long script call: the cancel ends what it
 * can, answers how many are still to go, and the reaper leader carries the rest on (cancel-walk.lua).
 */
class CancelWalkTest {
  /** acme's key (API_KEYS below), which the event-bus API asks for. */
  private static final io.vertx.core.eventbus.DeliveryOptions KEY = new io.vertx.core.eventbus.DeliveryOptions()
      .addHeader("apiKey", "k-acme");
  private final TestSteps steps = new TestSteps();
  private TestNode node;
  private Vertx vertx;
  private Redis client;
  private String base;

  @BeforeEach
  void startNode() {
    int port = TestRedis.freePort();
    base = "http://127.0.0.1:" + port;
    node = new TestNode().set("REAPER_INTERVAL", "20ms").set("ARCHIVE_DELAY", "1h")
        .set("HTTP_PORT", Integer.toString(port)).set("API_KEYS", "acme:client:k-acme")
        .pipeline("tree", "{'name':'tree','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'flow/parallel','params':{'forEach':'items','pipeline':'tree'}}]}")
        .start(steps.registry());
    vertx = Vertx.vertx();
    client = Redis.createClient(vertx, TestRedis.options(2_000));
  }

  @AfterEach
  void stopNode() {
    client.close();
    vertx.close().await();
    node.close();
  }

  /** A transaction of the tree, as fork.lua leaves it: a parent sleeping on its branches, a leaf pending. */
  private Request state(String txId, String root, int depth, String parent, List<String> branches) {
    Request r = Request.cmd(Command.HSET).arg(node.keys.stateH(txId)).arg("owner").arg("acme").arg("type")
        .arg("tree").arg("group").arg("master").arg("status").arg("running").arg("attempt").arg("1");
    if (parent != null) {
      r.arg("parentTxId").arg(parent).arg("parentGroup").arg("master").arg("root").arg(root).arg("depth").arg(depth);
    }
    if (branches == null) {
      return r.arg("processingState").arg("pending");
    }
    JsonObject fork = new JsonObject().put("ids", new JsonArray(new ArrayList<>(branches))).put("need", branches.size())
        .put("all", true).put("cof", false).put("max", branches.size()).put("next", branches.size());
    return r.arg("processingState").arg("sleeping").arg("waitingFor").arg("fork").arg("fork").arg(fork.encode());
  }

  /**
   * Builds a tree straight in Redis, widths[d] branches to each transaction at depth d (10, 10, 1000: root -> 10
   * -> 10 each -> 1000 leaves each, 100,111 transactions); answers every txId, the root first.
   */
  private List<String> tree(String root, int... widths) {
    List<String> all = new ArrayList<>(List.of(root));
    List<Request> batch = new ArrayList<>();
    List<String> level = List.of(root);
    for (int depth = 0; depth <= widths.length; depth++) {
      List<String> below = new ArrayList<>();
      for (String id : level) {
        String parent = depth == 0 ? null : parentOf.get(id);
        List<String> branches = depth == widths.length ? null : fresh(widths[depth]);
        batch.add(state(id, root, depth, parent, branches));
        if (branches != null) {
          branches.forEach(b -> parentOf.put(b, id));
          below.addAll(branches);
        }
        if (batch.size() == 2_000) {
          client.batch(batch).await();
          batch = new ArrayList<>();
        }
      }
      all.addAll(below);
      level = below;
    }
    client.batch(batch).await();
    parentOf.clear();
    return all;
  }

  private final java.util.Map<String, String> parentOf = new java.util.HashMap<>();

  private List<String> fresh(int n) {
    List<String> ids = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ids.add(node.keys.newTxId(0));
    }
    return ids;
  }

  /** How many of the transactions are not complete with status cancelled. */
  private long notCancelled(List<String> ids) {
    long left = 0;
    for (int from = 0; from < ids.size(); from += 2_000) {
      List<Request> reads = new ArrayList<>();
      for (String id : ids.subList(from, Math.min(from + 2_000, ids.size()))) {
        reads.add(Request.cmd(Command.HMGET).arg(node.keys.stateH(id)).arg("processingState").arg("status"));
      }
      for (Response r : client.batch(reads).await()) {
        if (!"complete".equals(String.valueOf(r.get(0))) || !"cancelled".equals(String.valueOf(r.get(1)))) {
          left++;
        }
      }
    }
    return left;
  }

  /**
   * The longest of this test's script calls (EVALSHA naming its prefix) logged after the entry after, in
   * microseconds, with the call. A figure for the record, not a verdict: how long a call holds Redis depends
   * on the machine (on a shared two-core one an O(1) HSET inside a script has been logged at 100 ms, time in
   * which Redis was not scheduled); what bounds it is the work per call, which CancelScriptTest holds at 20.
   */
  private static String longestScript(Response log, long after, String prefix) {
    long longest = -1;
    String which = "";
    for (Response e : log) {
      String args = e.get(3).toString();
      if (e.get(0).toLong() > after && args.contains(prefix) && args.startsWith("[evalsha")
          && e.get(2).toLong() > longest) {
        longest = e.get(2).toLong();
        which = args.substring(0, Math.min(120, args.length()));
      }
    }
    return longest < 0 ? "none over 10 ms" : longest + " us: " + which;
  }

  /** A Redis setting, as the first server has it. */
  private static String config(String name) {
    Response conf = TestRedis.onEveryServer("CONFIG", "GET", name).get(0);
    return (conf.getKeys().isEmpty() ? conf.get(1) : conf.get(name)).toString();
  }

  @Test
  void a_tree_of_100000_waiting_descendants_is_cancelled_with_none_left_live() {
    String root = node.keys.newTxId(0);
    // the whole tree is in one partition: on the Redis Cluster pass a tenth of it runs the same walk over many
    // calls in that partition's slot, and the full size runs once, on one Redis
    int size = TestRedis.clusterMode() ? 10_111 : 100_111;
    List<String> all = tree(root, 10, 10, (size - 111) / 100);
    assertEquals(size, all.size());
    // SLOWLOG keeps the calls over 10 ms of every client (other tests share this Redis): this test reads the
    // entries after the last one there now that name its prefix, and puts the threshold back after
    String threshold = config("slowlog-log-slower-than");
    String maxLen = config("slowlog-max-len");
    List<Long> after = new ArrayList<>();
    for (Response last : TestRedis.onEveryServer("SLOWLOG", "GET", "1")) {
      after.add(last.size() == 0 ? -1 : last.get(0).get(0).toLong());
    }
    List<String> longest = new ArrayList<>();
    Transactions.Cancelled c;
    try {
      TestRedis.onEveryServer("CONFIG", "SET", "slowlog-max-len", "100000");
      TestRedis.onEveryServer("CONFIG", "SET", "slowlog-log-slower-than", "10000");
      c = node.transactions.cancelTree(root, "acme").await();
      Eventually.until(Duration.ofSeconds(60), "the reaper to carry the walk on to its end",
          () -> cmd("LLEN", node.keys.cancelL(0)).toLong(), n -> n == 0);
      List<Response> logs = TestRedis.onEveryServer("SLOWLOG", "GET", "-1");
      for (int server = 0; server < logs.size(); server++) {
        longest.add(longestScript(logs.get(server), after.get(server), node.prefix));
      }
    } finally {
      TestRedis.onEveryServer("CONFIG", "SET", "slowlog-log-slower-than", threshold);
      TestRedis.onEveryServer("CONFIG", "SET", "slowlog-max-len", maxLen);
    }
    assertEquals(TxStatus.CANCELLED, c.summary().status(), "the root ends at once");
    assertTrue(c.pending() > 0 && c.pending() < size, "the cancel answered what was still to go: " + c.pending());
    System.out.println("CancelWalkTest: the longest script call of the " + size + "-transaction cancel, per server: "
        + longest);
    assertEquals(0, notCancelled(all), "transactions of the tree not cancelled");
    assertEquals(size, cmd("ZCARD", node.keys.toArchiveZ(0)).toLong(), "every one waits for the archive");
  }

  /** POST path as acme's client: the status and the JSON body. */
  private JsonObject post(String path) {
    try {
      java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create(base + path))
              .header("Authorization", "Bearer k-acme").POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
          java.net.http.HttpResponse.BodyHandlers.ofString());
      return new JsonObject(r.body()).put("httpStatus", r.statusCode());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void the_http_cancel_answers_200_for_a_tree_it_finished_and_202_with_what_is_pending_for_one_it_did_not() {
    String small = node.keys.newTxId(0);
    List<String> few = tree(small, 10);
    JsonObject done = post("/api/v1/transactions/" + small + "/cancel");
    assertEquals(200, done.getInteger("httpStatus"), done.encode());
    assertEquals("cancelled", done.getString("status"));
    assertEquals(null, done.getValue("cancelPending"));
    assertEquals(0, notCancelled(few));

    // 10 x 1000 leaves: more than the cancel's own 40 calls of 20 reach before it answers
    String large = node.keys.newTxId(0);
    List<String> many = tree(large, 10, 1000);
    JsonObject going = post("/api/v1/transactions/" + large + "/cancel");
    assertEquals(202, going.getInteger("httpStatus"), going.encode());
    assertEquals("cancelled", going.getString("status"));
    assertTrue(going.getLong("cancelPending") > 0, going.encode());
    Eventually.until(Duration.ofSeconds(30), "the reaper to finish the walk",
        () -> cmd("LLEN", node.keys.cancelL(0)).toLong(), n -> n == 0);
    assertEquals(0, notCancelled(many));
    assertEquals(409, post("/api/v1/transactions/" + large + "/cancel").getInteger("httpStatus"));
  }

  @Test
  void the_event_bus_cancel_answers_what_is_pending_for_a_tree_it_did_not_finish_as_http_does() {
    String large = node.keys.newTxId(0);
    List<String> many = tree(large, 10, 1000);
    JsonObject going = (JsonObject) node.node().vertx().eventBus().request(Addresses.TX_CANCEL,
        new JsonObject().put("txId", large).put("owner", "acme"), KEY).await().body();
    assertEquals("cancelled", going.getString("status"));
    assertTrue(going.getLong("cancelPending") > 0, going.encode());
    Eventually.until(Duration.ofSeconds(30), "the reaper to finish the walk",
        () -> cmd("LLEN", node.keys.cancelL(0)).toLong(), n -> n == 0);
    assertEquals(0, notCancelled(many));

    String small = node.keys.newTxId(0);
    List<String> few = tree(small, 10);
    JsonObject done = (JsonObject) node.node().vertx().eventBus().request(Addresses.TX_CANCEL,
        new JsonObject().put("txId", small).put("owner", "acme"), KEY).await().body();
    assertEquals("cancelled", done.getString("status"));
    assertEquals(null, done.getValue("cancelPending"), done.encode());
    assertEquals(0, notCancelled(few));
  }
}
