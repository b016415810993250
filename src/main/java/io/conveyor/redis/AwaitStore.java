package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Business events and the steps that await them (event-send.lua, event-wait.lua). The keys of one owner, event
 * name and business key share a hash tag: the partition owner, name and key hash to (as an externalId does), so
 * sending and matching are one script in one slot. The transactions woken live in their own partitions; the
 * caller wakes them (see domain/Events).
 */
public final class AwaitStore extends Store {
  /** What a send did: its code (DELIVERED, START, KEPT or DUPLICATE), the outcome of a duplicate, the waiters. */
  public record Sent(Code code, String outcome, List<String> waiters) {
  }

  /** What a wait found: its code (DELIVERED, WAITING or TIMED_OUT) and, when delivered, the event. */
  public record Found(Code code, String eventId, String payload) {
  }

  public AwaitStore(StoreContext r) {
    super(r);
  }

  /** Records an event and matches it (see event-send.lua); deliver is one or all. */
  public Future<Sent> send(String owner, String name, String key, String id, String payload, String deliver,
                           Duration retention, boolean startOn) {
    return r.run(r.scripts().eventSend, keys(owner, name, key), List.of(id, payload, deliver, r.now(),
        Long.toString(retention.toMillis()), startOn ? "1" : "")).map(reply -> {
          Code code = Code.of(reply);
          int from = code == Code.DUPLICATE ? 2 : 1;
          List<String> waiters = new ArrayList<>();
          for (int i = from; i < reply.size(); i++) {
            waiters.add(reply.get(i).toString());
          }
          return new Sent(code, code == Code.DUPLICATE ? reply.get(1).toString() : null, waiters);
        });
  }

  /**
   * A waiter (txId:step) begins to wait for up to timeout (ending false), or ends its wait (ending true): see
   * event-wait.lua.
   */
  public Future<Found> await(String owner, String name, String key, String waiter, Duration timeout,
                             Duration retention, boolean ending) {
    long now = Long.parseLong(r.now());
    return r.run(r.scripts().eventWait, keys(owner, name, key), List.of(waiter, Long.toString(now),
        Long.toString(retention.toMillis()), ending ? "end" : "wait",
        Long.toString(now + Math.min(timeout.toMillis(), Long.MAX_VALUE / 4))))
        .map(AwaitStore::found);
  }

  /**
   * Takes an event back from a waiter whose transaction had ended, for the next waiter or to keep (see
   * event-return.lua): the next waiter it went to, or null (kept, or nothing to take back).
   */
  public Future<String> takeBack(String owner, String name, String key, String id, String waiter, Duration retention) {
    return r.run(r.scripts().eventReturn, keys(owner, name, key), List.of(id, waiter, r.now(),
        Long.toString(retention.toMillis()))).map(reply -> Code.of(reply) == Code.DELIVERED ? reply.get(1).toString()
        : null);
  }

  private static Found found(Response reply) {
    Code code = Code.of(reply);
    return code == Code.DELIVERED ? new Found(code, reply.get(1).toString(), reply.get(2).toString())
        : new Found(code, null, null);
  }

  /** The four keys of one owner, name and key, in the partition they hash to. */
  public List<String> keys(String owner, String name, String key) {
    String id = owner.length() + ":" + owner + ":" + name + ":" + key;
    int p = keys.partitionFor(owner, "event:" + name + ":" + key);
    return List.of(keys.in(p, "eventH:" + id), keys.in(p, "eventsZ:" + id), keys.in(p, "eventKeptZ:" + id),
        keys.in(p, "eventWaitersZ:" + id));
  }
}
