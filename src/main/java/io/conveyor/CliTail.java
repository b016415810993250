package io.conveyor;

import io.conveyor.model.Strict;
import io.conveyor.redis.EventKinds;
import io.conveyor.redis.EventStore;
import io.conveyor.time.Ticker;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** conveyor tail: the operational events, oldest first, and with --follow the new ones as they come. */
@Command(name = "tail", description = {"Print operational events (--follow: as they come).",
    "Oldest first. --follow goes on until interrupted or --for runs out, and says on stderr now and then that it"
        + " is still following."},
    footerHeading = "%nExample:%n", footer = "  conveyor tail --kind node-dead --follow")
final class CliTail implements Callable<Integer> {
  private final CliSession s;
  @Option(names = "--kind", paramLabel = "K", completionCandidates = Kinds.class,
      description = "Only events of this kind: ${COMPLETION-CANDIDATES}.")
  String kind;
  @Option(names = "--subject", paramLabel = "S", description = "Only events about this (a txId, a node, a URL, …).")
  String subject;
  @Option(names = "--limit", paramLabel = "N", description = "The last N events (1-1000, default 20).")
  int limit = 20;
  @Option(names = "--follow", description = "Go on printing new events as they come.")
  boolean follow;
  @Option(names = "--for", paramLabel = "SECONDS", description = "With --follow: stop after this many seconds.")
  Long forSeconds;

  CliTail(CliSession s) {
    this.s = s;
  }

  /** The event kinds --kind takes, for completion and the help. */
  static final class Kinds implements Iterable<String> {
    @Override
    public Iterator<String> iterator() {
      return EventKinds.ALL.iterator();
    }
  }

  /** The events, oldest first; --follow prints new ones each second until --for runs out (or forever). */
  @Override
  public Integer call() {
    check();
    EventStore events = new EventStore(s.tx().context());
    JsonArray first = events.read(new EventStore.Filter(kind, null, subject, null, null, limit)).await();
    Seen seen = new Seen();
    for (int i = first.size() - 1; i >= 0; i--) {
      seen.print(first.getJsonObject(i));
    }
    if (!follow) {
      return Cli.OK;
    }
    long deadline = forSeconds == null ? Long.MAX_VALUE : Ticker.SYSTEM.nanos() + forSeconds * 1_000_000_000L;
    if (seen.last < 0) {
      seen.last = s.tx().clock().millis();
    }
    Instant since = s.tx().clock().instant();
    CliProgress progress = s.progress(5);
    int shownBefore = seen.count;
    while (forSeconds == null || Ticker.SYSTEM.nanos() - deadline < 0) {
      s.pause(forSeconds == null ? 1000 : Math.min(1000, (deadline - Ticker.SYSTEM.nanos()) / 1_000_000));
      JsonArray fresh = events.read(new EventStore.Filter(kind, null, subject, seen.last, null,
          EventStore.MAX_LENGTH)).await();
      for (int i = fresh.size() - 1; i >= 0; i--) {
        seen.print(fresh.getJsonObject(i));
      }
      s.out.flush();
      int news = seen.count - shownBefore;
      progress.note(() -> "tail: following since " + since + ", " + CliProgress.count(news, "new event") + " so far"
          + (forSeconds == null ? " (Ctrl-C stops)" : ""));
    }
    return Cli.OK;
  }

  /** An unknown kind matches nothing, silently: refused with the kinds there are and the nearest. */
  private void check() {
    if (kind != null && !EventKinds.ALL.contains(kind)) {
      throw new IllegalArgumentException("--kind: no event kind " + kind + Strict.suggestion(kind, EventKinds.ALL)
          + "; kinds: " + String.join(", ", EventKinds.ALL));
    }
    if (limit < 1 || limit > EventStore.MAX_LENGTH) {
      throw new IllegalArgumentException("--limit: a whole number from 1 to " + EventStore.MAX_LENGTH + ", got "
          + limit);
    }
    if (forSeconds != null && (forSeconds < 0 || !follow)) {
      throw new IllegalArgumentException("--for: a number of seconds (0 or more), with --follow");
    }
  }

  /** What has been printed: the newest time, and the events at that time (a later read starts there again). */
  private final class Seen {
    long last = -1;
    int count;
    private final Set<String> atLast = new HashSet<>();

    void print(JsonObject e) {
      long t = e.getLong("time");
      if (t < last || t == last && atLast.contains(e.encode())) {
        return;
      }
      if (t > last) {
        last = t;
        atLast.clear();
      }
      atLast.add(e.encode());
      count++;
      s.out.println(s.json() ? e.encode() : Instant.ofEpochMilli(t) + "  " + e.getString("kind") + "  "
          + e.getString("subject") + (e.getString("node", "").isEmpty() ? "" : "  node " + e.getString("node"))
          + "  " + e.getJsonObject("details", new JsonObject()).encode());
    }
  }
}
