package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.RedisUser;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A long-poll whose transaction completed while the notify subscription of its partition was down (a failover, a
 * dropped connection) answers once the subscription is back, not at the end of its wait: the completion's publish
 * reached no subscriber of this node, so the poll reads the status again when its partition is subscribed again.
 * The node connects as a Redis user of the test's own, so the test can keep it from subscribing for as long as it
 * takes (ACL), with the real Redis and the node's own code all the way.
 */
class LongPollGapTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private RedisUser user;
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
    if (user != null) {
      user.close();
    }
  }

  @Test
  void a_long_poll_answers_a_completion_published_while_its_partition_was_unsubscribed_once_it_is_subscribed_again() {
    user = RedisUser.create();
    int port = TestRedis.freePort();
    node = user.on(new TestNode()).set("HTTP_PORT", Integer.toString(port)).set("HTTP_MAX_WAIT", "60s")
        .pipeline("approval", "{'name':'approval','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/wait','params':{'switch':'go'}}]}")
        .start(new TestSteps().registry());
    String txId = node.start("approval", new JsonObject());
    Eventually.until(Duration.ofSeconds(10), txId + " to wait for its switch",
        () -> node.store.reads.getState(txId).await().processingState(), "sleeping"::equals);
    awaitSubscribers(1);

    CompletableFuture<HttpResponse<String>> poll = http.sendAsync(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/api/v1/transactions/" + txId + "?wait=60"))
        .header("Authorization", "Bearer " + KeyedApi.CLIENT).GET().build(), HttpResponse.BodyHandlers.ofString());
    // the poll has read the transaction twice (before and after it listens) and waits: only a notice can answer it
    Eventually.until(Duration.ofSeconds(10), "the long-poll to wait", this::longPolls, n -> n == 1);

    // the node's notify connection is dropped, and the node may not subscribe again until the test lets it
    user.set("-subscribe", "-ssubscribe");
    Set<String> dropped = notifyClients();
    dropped.forEach(c -> TestRedis.onEveryServer("CLIENT", "KILL", "ID", c.split(" ")[0], "ADDR", c.split(" ")[1]));
    awaitSubscribers(0);

    // the node tried to subscribe again and was refused: its gap stands until the test lets it subscribe
    Eventually.until(Duration.ofSeconds(10), "Redis to refuse the node's subscribe", () -> user.refused("subscribe"),
        refused -> refused);
    node.transactions.setSwitch(txId, "acme", "go", true).await();
    assertEquals("success", node.awaitFinal(txId).status().wire());
    // its completion was published while no connection of the node listened: the poll did not hear it
    awaitSubscribers(0);
    assertFalse(poll.isDone(), "the poll answered while nothing could have told it");

    user.set("+subscribe", "+ssubscribe");
    // subscribed again within the backoff (2 s at most): the poll answers then, long before its 60 s
    HttpResponse<String> answer = Eventually.until(Duration.ofSeconds(20), "the long-poll to answer",
        () -> poll.getNow(null), r -> r != null);
    assertEquals(200, answer.statusCode());
    assertEquals("success", new JsonObject(answer.body()).getString("status"));
  }

  /** The node's waiting long-polls, as its gauge counts them. */
  private double longPolls() {
    var gauge = node.node().metrics().registry().find("conveyor.http.long.polls").gauge();
    return gauge == null ? -1 : gauge.value();
  }

  /** Waits until Redis counts this many subscribers of each partition's notify channel. */
  private void awaitSubscribers(int n) {
    String numsub = node.keys.shardChannels() ? "SHARDNUMSUB" : "NUMSUB";
    for (int p : node.keys.all()) {
      Eventually.until(Duration.ofSeconds(10), n + " subscribers of partition " + p + "'s notify channel",
          () -> TestRedis.onEveryServer("PUBSUB", numsub, node.keys.notifyChannel(p)).stream()
              .mapToInt(r -> r.get(1).toInteger()).sum(), count -> count == n);
    }
  }

  /** The node's notify connections on every server, as "id addr" (an id alone is only unique on its server). */
  private Set<String> notifyClients() {
    return TestRedis.onEveryServer("CLIENT", "LIST").stream().flatMap(r -> r.toString().lines())
        .filter(l -> l.contains("name=conveyor-notify:" + node.node().nodeId()))
        .map(l -> field(l, "id") + " " + field(l, "addr")).collect(Collectors.toSet());
  }

  private static String field(String clientLine, String name) {
    return Arrays.stream(clientLine.split(" ")).filter(f -> f.startsWith(name + "=")).findFirst()
        .orElseThrow().substring(name.length() + 1);
  }
}
