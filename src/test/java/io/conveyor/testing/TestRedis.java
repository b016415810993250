package io.conveyor.testing;

import io.vertx.core.Vertx;
import io.vertx.redis.client.Redis;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import io.vertx.redis.client.Command;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import redis.embedded.RedisServer;

/**
 * The Redis tests use: CONVEYOR_TEST_REDIS_URL if set, else the local server on 6379 if it answers, else an
 * embedded one on a free port (started once per JVM). Every test takes its own key prefix and drops it after.
 */
public final class TestRedis {
  private static String url;
  private static Vertx vertx;
  private static Redis client;

  private TestRedis() {
  }

  public static synchronized String url() {
    if (url == null) {
      String given = System.getenv("CONVEYOR_TEST_REDIS_URL");
      if (given != null && !given.isBlank()) {
        url = given;
      } else if (answers(6379)) {
        url = "redis://127.0.0.1:6379";
      } else {
        url = startEmbedded();
      }
    }
    return url;
  }

  /** A fresh key prefix, so tests never see each other's keys. */
  public static String newPrefix() {
    byte[] b = new byte[6];
    ThreadLocalRandom.current().nextBytes(b);
    return "test-" + HexFormat.of().formatHex(b) + ":";
  }

  /** Runs a plain command and waits for its reply (for arranging and asserting, from a test thread). */
  public static Response cmd(Object... args) {
    Request r = Request.cmd(Command.create(args[0].toString()));
    for (int i = 1; i < args.length; i++) {
      r.arg(args[i].toString());
    }
    return client().send(r).await();
  }

  /** Every key under a prefix. */
  public static List<String> keys(String prefix) {
    List<String> out = new ArrayList<>();
    String cursor = "0";
    do {
      Response page = cmd("SCAN", cursor, "MATCH", prefix + "*", "COUNT", 1000);
      cursor = page.get(0).toString();
      page.get(1).forEach(k -> out.add(k.toString()));
    } while (!cursor.equals("0"));
    return out;
  }

  /**
   * The keys a request could have left behind: every key under the prefix but the stats slots that hold
   * only what the reaper leader samples on its own every round (queue lengths). A counted start or
   * completion in a stats slot still shows.
   */
  public static List<String> traces(String prefix) {
    List<String> out = new ArrayList<>();
    for (String k : keys(prefix)) {
      if (k.matches(".*:stats[123]H:\\d+")) {
        boolean onlySamples = true;
        for (Response f : cmd("HKEYS", k)) {
          String name = f.toString();
          onlySamples &= name.startsWith("queue.") || name.equals("processing") || name.equals("sleeping");
        }
        if (onlySamples) {
          continue;
        }
      }
      out.add(k);
    }
    return out;
  }

  public static void drop(String prefix) {
    for (String k : keys(prefix)) {
      cmd("DEL", k);
    }
  }

  private static synchronized Redis client() {
    if (client == null) {
      vertx = Vertx.vertx();
      client = Redis.createClient(vertx, new RedisOptions().setConnectionString(url()).setMaxPoolWaiting(1000));
    }
    return client;
  }

  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public static boolean answers(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 300);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static String startEmbedded() {
    int port = freePort();
    try {
      RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").build();
      server.start();
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          server.stop();
        } catch (IOException e) {
          // the JVM is going away
        }
      }));
    } catch (IOException e) {
      throw new IllegalStateException("no Redis for tests: " + e.getMessage(), e);
    }
    return "redis://127.0.0.1:" + port;
  }
}
