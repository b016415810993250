package io.conveyor.redis;

import io.conveyor.testing.ScriptHarness;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisConnection;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** Listens on the notify channels of a prefix, as a node or client would, and hands the messages to a test. */
public final class NotifyProbe implements AutoCloseable {
  private final RedisConnection conn;
  private final BlockingQueue<String> messages = new LinkedBlockingQueue<>();

  private NotifyProbe(RedisConnection conn) {
    this.conn = conn;
  }

  public static NotifyProbe subscribe(ScriptHarness h) {
    return subscribe(h.link, h.keys);
  }

  public static NotifyProbe subscribe(RedisLink link, Keys keys) {
    NotifyProbe probe = new NotifyProbe(link.dedicated().await());
    probe.conn.handler(probe::onPush);
    // every partition's channel, as NotifyVerticle does (a shard channel each on its slot's master)
    keys.all().forEach(p -> probe.conn.send(keys.subscribe(keys.notifyChannel(p))).await());
    return probe;
  }

  private void onPush(Response r) {
    if (Keys.isMessage(r)) {
      messages.add(r.get(2).toString());
    }
  }

  /** The next message, waiting at most 5 s. */
  public String next() throws InterruptedException {
    String m = messages.poll(5, TimeUnit.SECONDS);
    if (m == null) {
      throw new AssertionError("no message on the notify channel within 5 s");
    }
    return m;
  }

  @Override
  public void close() {
    conn.close().await();
  }
}
