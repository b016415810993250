package io.conveyor;

import static io.conveyor.CliArgs.arg;
import static io.conveyor.CliArgs.option;
import io.conveyor.domain.Transactions;
import io.conveyor.redis.EventStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** conveyor tail: the operational events, oldest first, and with --follow the new ones as they come. */
record CliTail(PrintStream out, boolean json) {
  /** tail: the events, oldest first; --follow prints new ones each second until --for runs out (or forever). */
  int run(Vertx vertx, Transactions tx, List<String> args) {
    EventStore events = new EventStore(tx.context());
    int limit = Integer.parseInt(option(args, "--limit", "20"));
    if (limit < 1 || limit > EventStore.MAX_LENGTH) {
      throw new IllegalArgumentException("--limit: 1 to " + EventStore.MAX_LENGTH);
    }
    String kind = option(args, "--kind", null);
    String subject = option(args, "--subject", null);
    JsonArray first = events.read(new EventStore.Filter(kind, null, subject, null, null, limit)).await();
    long last = -1;
    Set<String> atLast = new HashSet<>();
    for (int i = first.size() - 1; i >= 0; i--) {
      JsonObject e = first.getJsonObject(i);
      printEvent(e);
      if (e.getLong("time") > last) {
        last = e.getLong("time");
        atLast.clear();
      }
      atLast.add(e.encode());
    }
    if (!args.contains("--follow")) {
      return Cli.OK;
    }
    String forSeconds = option(args, "--for", null);
    long deadline = forSeconds == null ? Long.MAX_VALUE : Ticker.SYSTEM.nanos() + Long.parseLong(forSeconds) * 1_000_000_000L;
    if (last < 0) {
      last = tx.clock().millis();
    }
    while (Ticker.SYSTEM.nanos() < deadline) {
      Promise<Void> tick = Promise.promise();
      vertx.setTimer(Math.max(1, Math.min(1000, (deadline - Ticker.SYSTEM.nanos()) / 1_000_000)), t -> tick.complete());
      tick.future().await();
      JsonArray fresh = events.read(new EventStore.Filter(kind, null, subject, last, null, EventStore.MAX_LENGTH))
          .await();
      for (int i = fresh.size() - 1; i >= 0; i--) {
        JsonObject e = fresh.getJsonObject(i);
        long t = e.getLong("time");
        if (t == last && atLast.contains(e.encode())) {
          continue;
        }
        if (t > last) {
          last = t;
          atLast.clear();
        }
        atLast.add(e.encode());
        printEvent(e);
      }
      out.flush();
    }
    return Cli.OK;
  }

  private void printEvent(JsonObject e) {
    out.println(json ? e.encode() : Instant.ofEpochMilli(e.getLong("time")) + "  " + e.getString("kind")
        + "  " + e.getString("subject") + (e.getString("node", "").isEmpty() ? "" : "  node " + e.getString("node"))
        + "  " + e.getJsonObject("details", new JsonObject()).encode());
  }
}
