package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The stats counts of one link's start and complete calls (the last element of their replies, lua/lib/stats.lua
 * stats_flat), added up per 5 s slot key and written once a second by stats-add.lua. At a steady load each of
 * those calls carries one transaction, and the ten-odd HINCRBYs a call made were half of Redis's commands
 * (docs/decisions.md, "Stats counted by the node"). Used on its link's context only, like the link. A write that
 * fails keeps its counts for the next; a slot older than the 5 s series keeps is dropped. A node that dies loses
 * at most the last second's counts; one that stops writes them first (RedisLink.close).
 */
final class StatsTally {
  /** How long counts wait in the node before they are written. */
  static final long FLUSH_MS = 1_000;
  /** The 5 s series keeps a slot this long (lib/stats.lua STATS_SERIES): older counts would land in a dead key. */
  private static final long KEEP_MS = 300_000;

  private final Vertx vertx;
  private final RedisLink link;
  /** stats1H key of a slot → a time in it (ms) and its counts by field. */
  private final Map<String, Slot> slots = new HashMap<>();
  private LuaScript script;
  private long timer = -1;
  private long newest;

  private static final class Slot {
    private final long at;
    private final Map<String, Long> counts = new HashMap<>();

    private Slot(long at) {
      this.at = at;
    }
  }

  StatsTally(Vertx vertx, RedisLink link) {
    this.vertx = vertx;
    this.link = link;
  }

  /** Adds a call's counts (flat: field, n, …) to the slot whose stats1H key is key; now is a time in it. */
  void add(String key, long now, Response flat, LuaScript statsAdd) {
    if (flat == null || flat.size() < 2) {
      return;
    }
    script = statsAdd;
    Slot slot = slots.computeIfAbsent(key, k -> new Slot(now));
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      slot.counts.merge(flat.get(i).toString(), flat.get(i + 1).toLong(), Long::sum);
    }
    newest = Math.max(newest, now);
    arm();
  }

  private void arm() {
    if (timer == -1 && !slots.isEmpty()) {
      timer = vertx.setTimer(FLUSH_MS, t -> {
        timer = -1;
        flush();
      });
    }
  }

  /** Writes every count held, one stats-add.lua call per slot; what fails goes back for the next write. */
  Future<Void> flush() {
    if (timer != -1) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
    if (slots.isEmpty()) {
      return Future.succeededFuture();
    }
    Map<String, Slot> out = new HashMap<>(slots);
    slots.clear();
    List<Future<Response>> writes = new ArrayList<>(out.size());
    out.forEach((key, slot) -> {
      if (newest - slot.at > KEEP_MS) {
        return;
      }
      List<String> args = new ArrayList<>(1 + 2 * slot.counts.size());
      args.add(Long.toString(slot.at));
      slot.counts.forEach((f, n) -> {
        args.add(f);
        args.add(Long.toString(n));
      });
      writes.add(Scripts.run(link, script, List.of(key), args).onFailure(e -> keep(key, slot)));
    });
    return Future.join(writes).<Void>mapEmpty().otherwiseEmpty();
  }

  /** A slot's counts that could not be written: back into the tally, for the next write. */
  private void keep(String key, Slot failed) {
    Slot slot = slots.computeIfAbsent(key, k -> new Slot(failed.at));
    failed.counts.forEach((f, n) -> slot.counts.merge(f, n, Long::sum));
    arm();
  }
}
