package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.conveyor.config.Config;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** How a link answers when no Redis answers: always RedisUnavailable, whatever the client mode. */
class RedisLinkTest {
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static int closedPort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void a_cluster_link_whose_masters_are_all_gone_fails_every_command_as_unavailable() throws Exception {
    String url = "redis://127.0.0.1:" + closedPort();
    Config.Redis redis = new Config.Redis(Config.RedisMode.CLUSTER, List.of(url), "", "p:", 3, null, 100,
        Duration.ofMillis(500), 0, Duration.ofSeconds(1));
    RedisLink link = new RedisLink(vertx, RedisLink.options(redis), Duration.ofMillis(500));
    // no node gives a slot map, so each command's attempt to read one fails while commands keep coming: every
    // one must still fail as an outage (RedisFailoverIT meets the case of a connect that fails at once)
    for (int i = 0; i < 20; i++) {
      Throwable failure = link.send(Request.cmd(Command.PING)).toCompletionStage().toCompletableFuture()
          .handle((r, e) -> e).get(5, TimeUnit.SECONDS);
      assertInstanceOf(RedisUnavailable.class, failure instanceof CompletionException c ? c.getCause() : failure,
          "command " + i);
    }
    link.close().await();
  }

  @Test
  void a_redis_that_never_answers_fails_every_waiting_request_as_unavailable_within_the_timeout()
      throws Exception {
    // a server that accepts and reads but never replies: a hung Redis
    try (ServerSocket hung = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      java.util.List<java.net.Socket> held = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
      Thread acceptor = new Thread(() -> {
        try {
          while (true) {
            held.add(hung.accept());
          }
        } catch (java.io.IOException closed) {
          // the test is over
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
      RedisLink link = new RedisLink(vertx, RedisLink.options("redis://127.0.0.1:" + hung.getLocalPort(), 100),
          Duration.ofMillis(300));
      java.util.List<java.util.concurrent.CompletableFuture<Throwable>> sent = new java.util.ArrayList<>();
      for (int i = 0; i < 5; i++) {
        sent.add(link.send(Request.cmd(Command.PING)).toCompletionStage().toCompletableFuture().handle((r, e) -> e));
        sent.add(link.batch(List.of(Request.cmd(Command.PING))).toCompletionStage().toCompletableFuture()
            .handle((r, e) -> e));
      }
      for (int i = 0; i < sent.size(); i++) {
        Throwable failure = sent.get(i).get(5, TimeUnit.SECONDS);
        assertInstanceOf(RedisUnavailable.class, failure instanceof CompletionException c ? c.getCause() : failure,
            "request " + i);
      }
      link.close().await();
      for (java.net.Socket s : held) {
        s.close();
      }
    }
  }
}
