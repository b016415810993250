package io.conveyor.redis;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Response;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stats counts of one link's start and complete calls (the last element of their replies,
 * lua/lib/stats.lua stats_flat: a line '<field> <n>' each), added up per 5 s slot key and written once a second by
 * stats-add.lua. At a steady load each of those calls carries one transaction, and the ten-odd HINCRBYs a call
 * made were half of Redis's commands (docs/decisions.md, "Stats counted by the node"); they also answer the same
 * text again and again, so the last text read is kept with what it counts. Used on the context of the calls that
 * feed it (its link's), where its timer runs too; close hops there. A write that fails keeps its counts for the
 * next, until the reaper's fold of their slot into the 60 s and 600 s series is due (then they are dropped, logged:
 * written later they would reach the 5 s series only). A write whose answer was lost may have landed and is sent
 * again (counted twice); a node that dies loses at most the last second's counts; one that stops writes them first.
 */
final class StatsTally {
  private static final Logger log = LoggerFactory.getLogger(StatsTally.class);
  /** How long counts wait in the node before they are written. */
  static final long FLUSH_MS = 1_000;
  /** A 5 s slot is folded into the coarser series this long after it starts (lib/stats.lua: 5 s + STATS_FOLD_LAG). */
  private static final long FOLDED_AFTER_MS = 15_000;
  /** The most a stopping node waits for its last write. */
  private static final long CLOSE_WAIT_MS = 2_000;

  private final Vertx vertx;
  private final RedisLink link;
  /** stats1H key of a slot → a time in it (ms) and its counts by field. */
  private final Map<String, Slot> slots = new HashMap<>();
  private LuaScript script;
  private Clock clock;
  private Context context;
  private long timer = -1;
  private boolean closed;

  private static final class Slot {
    private final long at;
    /** Count by field, in a one-element array each: added to in place. */
    private final Map<String, long[]> counts = new HashMap<>();

    private Slot(long at) {
      this.at = at;
    }
  }

  private final long flushMs;

  StatsTally(Vertx vertx, RedisLink link) {
    this(vertx, link, FLUSH_MS);
  }

  /** With counts written every flushMs (a test's hour: only close writes them). */
  StatsTally(Vertx vertx, RedisLink link, long flushMs) {
    this.vertx = vertx;
    this.link = link;
    this.flushMs = flushMs;
  }

  /** The last text added, and its fields and counts in order. */
  private String lastText = "";
  private String[] lastFields = new String[0];
  private long[] lastCounts = new long[0];

  /**
   * Adds a call's counts (its text: a line '<field> <n>' each) to the slot whose stats1H key is key; now (clock's)
   * is a time in it.
   */
  void add(String key, long now, Response text, LuaScript statsAdd, Clock clock) {
    String counted = text == null ? "" : text.toString();
    if (counted.isEmpty()) {
      return;
    }
    if (!counted.equals(lastText)) {
      read(counted);
    }
    script = statsAdd;
    this.clock = clock;
    if (context == null) {
      context = vertx.getOrCreateContext();
    }
    Slot slot = slots.computeIfAbsent(key, k -> new Slot(now));
    for (int i = 0; i < lastFields.length; i++) {
      slot.counts.computeIfAbsent(lastFields[i], f -> new long[1])[0] += lastCounts[i];
    }
    arm();
  }

  /** Reads a text of counts into lastFields and lastCounts (a field holds no line break; its count follows a space). */
  private void read(String counted) {
    List<String> fields = new ArrayList<>();
    List<Long> counts = new ArrayList<>();
    for (int from = 0; from < counted.length(); ) {
      int end = counted.indexOf('\n', from);
      end = end < 0 ? counted.length() : end;
      int space = counted.lastIndexOf(' ', end - 1);
      if (space < from + 1) {
        throw new IllegalArgumentException("a stats line without a count: " + counted.substring(from, end));
      }
      fields.add(counted.substring(from, space));
      counts.add(Long.parseLong(counted, space + 1, end, 10));
      from = end + 1;
    }
    lastFields = fields.toArray(new String[0]);
    lastCounts = counts.stream().mapToLong(Long::longValue).toArray();
    lastText = counted;
  }

  private void arm() {
    if (timer == -1 && !closed && !slots.isEmpty()) {
      timer = vertx.setTimer(flushMs, t -> {
        timer = -1;
        flush();
      });
    }
  }

  /** Writes what is held (on the tally's context, bounded) and takes no more timers: the link is closing. */
  Future<Void> close() {
    if (context == null || Vertx.currentContext() == context) {
      return closeHere();
    }
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> closeHere().onComplete(done));
    return done.future();
  }

  private Future<Void> closeHere() {
    closed = true;
    return flush().timeout(CLOSE_WAIT_MS, TimeUnit.MILLISECONDS).otherwiseEmpty();
  }

  /** Writes every count held, one stats-add.lua call per slot; what fails goes back for the next write. */
  private Future<Void> flush() {
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
      if (clock.millis() - slot.at > FOLDED_AFTER_MS) {
        log.warn("stats: {} counts of the slot at {} could not be written before it was folded; dropped",
            slot.counts.values().stream().mapToLong(n -> n[0]).sum(), slot.at);
        return;
      }
      List<String> args = new ArrayList<>(1 + 2 * slot.counts.size());
      args.add(Long.toString(slot.at));
      slot.counts.forEach((f, n) -> {
        args.add(f);
        args.add(Long.toString(n[0]));
      });
      writes.add(Scripts.run(link, script, List.of(key), args).onFailure(e -> keep(key, slot)));
    });
    return Future.join(writes).<Void>mapEmpty().otherwiseEmpty();
  }

  /** A slot's counts that could not be written: back into the tally, for the next write. */
  private void keep(String key, Slot failed) {
    Slot slot = slots.computeIfAbsent(key, k -> new Slot(failed.at));
    failed.counts.forEach((f, n) -> slot.counts.computeIfAbsent(f, x -> new long[1])[0] += n[0]);
    arm();
  }
}
