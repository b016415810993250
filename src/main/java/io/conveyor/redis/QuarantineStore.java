package io.conveyor.redis;

import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import java.util.ArrayList;
import java.util.List;

/**
 * The transactions the archive database refused one by one (quarantineH beside exceptionZ, per partition): set
 * aside by the archive leader, listed, retried or dropped by an operator, and how far the archive lags.
 */
public final class QuarantineStore extends Store {
  public QuarantineStore(StoreContext r) {
    super(r);
  }

  /** A transaction the archive refused alone: what was handed out, the database's message and SQLState. */
  public record Refused(ToArchive tx, String message, String sqlState) {
  }

  /** One quarantined transaction as listed: its partition and the reason recorded (time, message, sqlState, node). */
  public record Quarantined(String txId, int partition, JsonObject reason) {
    public JsonObject toJson() {
      return reason.copy().put("txId", txId).put("partition", partition);
    }
  }

  /** A page of the list and the cursor of the next one (null at the end). */
  public record Page(List<Quarantined> items, String next) {
  }

  /** Sets the refused transactions of partition p aside (archive-quarantine.lua); answers how many were. */
  public Future<Integer> setAside(int p, String nodeId, List<Refused> refused) {
    if (refused.isEmpty()) {
      return Future.succeededFuture(0);
    }
    List<String> k = new ArrayList<>(List.of(keys.toArchiveZ(p), keys.exceptionZ(p), keys.quarantineH(p),
        keys.eventsL(p)));
    String now = r.now();
    List<String> args = new ArrayList<>(List.of(now, nodeId));
    for (Refused x : refused) {
      k.add(keys.stateH(x.tx().txId()));
      args.add(x.tx().txId());
      args.add(x.tx().stamp());
      args.add(new JsonObject().put("time", Long.parseLong(now)).put("message", x.message())
          .put("sqlState", x.sqlState()).put("node", nodeId).encode());
    }
    return r.run(r.scripts().archiveQuarantine, k, args).map(reply -> reply.toInteger());
  }

  /** Puts a quarantined transaction back to be archived (archive-retry.lua): OK or NOT_FOUND. */
  public Future<Code> retry(String txId, String by) {
    int p = keys.partitionOf(txId);
    return r.run(r.scripts().archiveRetry, List.of(keys.toArchiveZ(p), keys.exceptionZ(p), keys.quarantineH(p),
        keys.eventsL(p), keys.stateH(txId)), List.of(txId, r.now(), by)).map(Code::of);
  }

  /** Deletes a quarantined transaction from Redis (archive-drop.lua): OK or NOT_FOUND. */
  public Future<Code> drop(String txId, String by) {
    int p = keys.partitionOf(txId);
    return r.run(r.scripts().archiveDrop, List.of(keys.toArchiveZ(p), keys.exceptionZ(p), keys.quarantineH(p),
        keys.eventsL(p), keys.liveZ(p), keys.stateH(txId)), List.of(txId, r.now(), by)).map(Code::of);
  }

  /**
   * Up to limit quarantined transactions from cursor on ("partition-hscanCursor"; null or "0-0" from the
   * start), partition by partition with HSCAN, so a long list never blocks Redis.
   */
  public Future<Page> list(String cursor, int limit) {
    String[] at = (cursor == null ? "0-0" : cursor).split("-", 2);
    return page(Integer.parseInt(at[0]), at[1], limit, new ArrayList<>());
  }

  private Future<Page> page(int p, String scan, int limit, List<Quarantined> out) {
    if (p >= keys.partitions() || out.size() >= limit) {
      return Future.succeededFuture(new Page(out, p >= keys.partitions() ? null : p + "-" + scan));
    }
    Request hscan = Request.cmd(Command.HSCAN).arg(keys.quarantineH(p)).arg(scan).arg("COUNT")
        .arg(Math.max(1, limit - out.size()));
    return r.send(hscan).compose(reply -> {
      var pairs = reply.get(1);
      for (int i = 0; i + 1 < pairs.size(); i += 2) {
        out.add(new Quarantined(pairs.get(i).toString(), p, new JsonObject(pairs.get(i + 1).toString())));
      }
      String next = reply.get(0).toString();
      return next.equals("0") ? page(p + 1, "0", limit, out) : page(p, next, limit, out);
    });
  }

  /**
   * How long (ms) the oldest due entry of toArchiveZ has been due, over every partition (0 when none is): how
   * far the archive lags behind.
   */
  public Future<Long> lag() {
    long now = r.clock().millis();
    List<Future<Long>> each = new ArrayList<>();
    for (int p : keys.all()) {
      each.add(r.send(Request.cmd(Command.ZRANGE).arg(keys.toArchiveZ(p)).arg(0).arg(0).arg("WITHSCORES"))
          .map(reply -> reply == null || reply.size() == 0 ? 0L : Math.max(0L, now - scoreOf(reply))));
    }
    return Future.all(each).map(all -> each.stream().mapToLong(Future::result).max().orElse(0L));
  }

  /** How many transactions are quarantined, over every partition. */
  public Future<Long> count() {
    List<Future<Long>> each = new ArrayList<>();
    for (int p : keys.all()) {
      each.add(r.send(Request.cmd(Command.HLEN).arg(keys.quarantineH(p))).map(reply -> reply.toLong()));
    }
    return Future.all(each).map(all -> each.stream().mapToLong(Future::result).sum());
  }

  /** The score of a one-member ZRANGE WITHSCORES (RESP2: member, score; RESP3: [[member, score]]). */
  private static long scoreOf(io.vertx.redis.client.Response reply) {
    var first = reply.get(0);
    String score = first.type() == io.vertx.redis.client.ResponseType.MULTI ? first.get(1).toString()
        : reply.get(1).toString();
    return (long) Double.parseDouble(score);
  }
}
