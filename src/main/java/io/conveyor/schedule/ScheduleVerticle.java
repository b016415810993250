package io.conveyor.schedule;

import io.conveyor.config.Config;
import io.conveyor.domain.Transactions;
import io.conveyor.lease.LeaderLoop;
import io.conveyor.lease.RoundFailures;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.Schedule;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.RedisAccess;
import io.conveyor.redis.ScheduleStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler of one partition, on the leader of its lease only (scheduleLock1/2). Each round (every
 * schedules.interval) takes or renews the lease and reads what is due (schedule-due.lua); moves each due schedule
 * on to its next fire time and its fires into the purgatory in one call (schedule-fire.lua); starts a transaction
 * per fire with externalId schedule:&lt;id&gt;:&lt;fire ms&gt; (so driving a fire twice starts it once); and records
 * what became of each (schedule-done.lua), which takes it out of the purgatory. A fire still in the purgatory after
 * schedules.redriveAfter (its leader died between the two calls) is driven again by whoever leads then. The
 * ticking, the renewal and the hand-on are the LeaderLoop's.
 */
public final class ScheduleVerticle extends VerticleBase {
  private static final Logger log = LoggerFactory.getLogger(ScheduleVerticle.class);
  /** The most due schedules, and fires to redrive, one round takes. */
  private static final int ROUND = 1000;
  /** The most fire times a catch-up looks at for one schedule. */
  private static final int LOOK_BACK = 10_000;
  private final RedisAccess redis;
  /** A Transactions on this verticle's own Redis context (the root builds it). */
  private final Function<StoreContext, Transactions> transactions;
  private final Config.Schedules settings;
  private final String nodeId;
  private final NodeMetrics metrics;
  private final int partition;
  private final LeaderLoop.Seat seat;
  private StoreContext context;
  private ScheduleStore store;
  private Transactions tx;
  private LeaderLoop loop;
  private RoundFailures failedRounds;

  /** The scheduler of the seat's partition. */
  public ScheduleVerticle(RedisAccess redis, Function<StoreContext, Transactions> transactions, Config.Schedules settings,
                          NodeMetrics metrics, LeaderLoop.Seat seat) {
    this.redis = redis;
    this.transactions = transactions;
    this.settings = settings;
    this.nodeId = seat.nodeId();
    this.metrics = metrics;
    this.partition = seat.partition();
    this.seat = seat;
  }

  @Override
  public Future<?> start() {
    context = redis.open(vertx);
    store = new ScheduleStore(context);
    tx = transactions.apply(context);
    failedRounds = new RoundFailures(log, "schedules (partition " + partition + ")");
    loop = new LeaderLoop(vertx, context, seat, "schedules" + partitionText(), settings.lease(), this::round);
    loop.tick();
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    loop.stop();
    return loop.handOn().eventually(() -> context.close());
  }

  /** One round (the loop never runs two at once); answers when the next is due. */
  private Future<Long> round() {
    if (!loop.wanted()) {
      if (loop.leads()) {
        // another node is this partition's heir now: let it take the lease at once (nothing is in hand between
        // rounds but the purgatory, which a new leader drives at once)
        loop.letGo();
      }
      return Future.succeededFuture(settings.interval().toMillis());
    }
    long asked = loop.asking();
    return store.due(partition, nodeId, settings.lease(), settings.grace(), ROUND, settings.redriveAfter(), true)
        .compose(round -> {
          loop.update(round != null, asked);
          return round == null ? Future.succeededFuture(false) : run(round)
              .map(v -> round.due().size() >= ROUND || round.redrive().size() >= ROUND);
        })
        .transform(ar -> {
          if (ar.failed()) {
            failedRounds.failed(ar.cause());
            return Future.succeededFuture(settings.interval().toMillis());
          }
          failedRounds.worked();
          return Future.succeededFuture(ar.result() ? 0L : settings.interval().toMillis());
        });
  }

  private String partitionText() {
    return redis.keys().partitions() > 1 ? " (partition " + partition + ")" : "";
  }

  /** One fire to drive: its schedule (null: gone), the fire time, and the run it may wait behind. */
  private record Fire(String id, Schedule schedule, long fire, String lastTxId, Long queuedFire, boolean redriven) {
  }

  private Future<Void> run(ScheduleStore.Round round) {
    long now = context.clock().millis();
    List<ScheduleStore.Move> moves = new ArrayList<>();
    Map<String, Fire> planned = new LinkedHashMap<>();
    Map<String, Schedule> schedules = new java.util.HashMap<>();
    for (ScheduleStore.Due d : round.due()) {
      Schedule s = parse(d.id(), d.definition());
      if (s == null) {
        continue;
      }
      schedules.put(d.id(), s);
      List<Long> times = new ArrayList<>(List.of(d.fire()));
      times.addAll(s.next(d.fire(), LOOK_BACK).stream().filter(t -> t <= now).toList());
      List<Long> fires = choose(s, times, now);
      long next = s.nextAfter(Math.max(now, times.get(times.size() - 1)));
      moves.add(new ScheduleStore.Move(d.id(), d.fire(), next < 0 ? ScheduleStore.Next.NONE
          : new ScheduleStore.Next(next, next + s.jitterOf(next)), times.size() - fires.size(), fires));
      for (long f : fires) {
        planned.put(d.id() + "@" + f, new Fire(d.id(), s, f, d.lastTxId(), d.queuedFire(), false));
      }
    }
    Future<List<Boolean>> moved = moves.isEmpty() ? Future.succeededFuture(List.of())
        : store.fire(partition, nodeId, moves);
    return moved.compose(ok -> {
      if (ok == null) {
        loop.update(false, loop.asking());
        return Future.<Void>succeededFuture(); // the lease went meanwhile: the next leader sees them due
      }
      List<Fire> toDrive = new ArrayList<>();
      for (int i = 0; i < moves.size(); i++) {
        ScheduleStore.Move m = moves.get(i);
        if (ok.get(i)) {
          if (m.misses() > 0) {
            metrics.scheduleFire("missed", m.misses(), -1);
          }
          m.fires().forEach(f -> toDrive.add(planned.get(m.id() + "@" + f)));
        }
      }
      for (ScheduleStore.Redrive r : round.redrive()) {
        Schedule s = r.definition() == null ? null : schedules.computeIfAbsent(r.id(), id -> parse(id, r.definition()));
        toDrive.add(new Fire(r.id(), s, r.fire(), r.lastTxId(), null, true));
      }
      return drive(toDrive).compose(done -> done.isEmpty() ? Future.<Void>succeededFuture()
          : store.done(partition, done).mapEmpty());
    });
  }

  /** The fires to run of the due times (oldest first) of a schedule, by its catch-up policy. */
  private List<Long> choose(Schedule s, List<Long> times, long now) {
    long tolerance = settings.missAfter().toMillis();
    List<Long> onTime = times.stream().filter(t -> now - (t + s.jitterOf(t)) <= tolerance).toList();
    if (onTime.size() == times.size()) {
      return times;
    }
    return switch (s.catchUp()) {
      case LATEST -> List.of(times.get(times.size() - 1));
      case ALL -> times.subList(0, Math.min(times.size(), s.catchUpLimit()));
      case NONE -> onTime;
    };
  }

  private Schedule parse(String id, String definition) {
    try {
      return Schedule.fromJson(new JsonObject(definition), id);
    } catch (RuntimeException e) {
      log.error("schedule {}: its stored definition cannot be read ({}); its fires are dropped", id, e.getMessage());
      return null;
    }
  }

  /** Drives the fires one schedule after another (a schedule's fires in order, each seeing the run before it). */
  private Future<List<ScheduleStore.Done>> drive(List<Fire> fires) {
    Map<String, List<Fire>> bySchedule = new LinkedHashMap<>();
    fires.stream().sorted(java.util.Comparator.comparingLong(Fire::fire))
        .forEach(f -> bySchedule.computeIfAbsent(f.id(), k -> new ArrayList<>()).add(f));
    List<Future<List<ScheduleStore.Done>>> each = new ArrayList<>();
    for (List<Fire> one : bySchedule.values()) {
      each.add(driveInOrder(one, 0, one.get(0).lastTxId(), new ArrayList<>()));
    }
    return Future.all(each).map(all -> {
      List<ScheduleStore.Done> out = new ArrayList<>();
      each.forEach(f -> out.addAll(f.result()));
      return out;
    });
  }

  private Future<List<ScheduleStore.Done>> driveInOrder(List<Fire> fires, int i, String last,
                                                       List<ScheduleStore.Done> out) {
    if (i == fires.size()) {
      return Future.succeededFuture(out);
    }
    Fire f = fires.get(i);
    return driveOne(f, last).recover(e -> {
      log.warn("schedule {}: fire {} not started ({}); it stays in the purgatory and is driven again", f.id(),
          java.time.Instant.ofEpochMilli(f.fire()), e.getMessage());
      return Future.succeededFuture(null);
    }).compose(d -> {
      if (d != null) {
        out.add(d);
      }
      return driveInOrder(fires, i + 1, d != null && d.outcome().equals("started") ? d.txId() : last, out);
    });
  }

  private Future<ScheduleStore.Done> driveOne(Fire f, String last) {
    if (f.schedule() == null) {
      return Future.succeededFuture(new ScheduleStore.Done(f.id(), f.fire(), "dropped", null, "no such schedule"));
    }
    Schedule s = f.schedule();
    if (f.redriven()) {
      // a leader that died may have started it already: then that start is this fire's, whatever the overlap
      // (Redis knows it for transactions.externalIdPeriod, hours; a purgatory is driven within seconds)
      return store.startedBy(s.owner(), "schedule:" + s.id() + ":" + f.fire()).compose(found -> found != null
          ? Future.succeededFuture(new ScheduleStore.Done(f.id(), f.fire(), "started", found, null))
          : decide(f, last));
    }
    return decide(f, last);
  }

  private Future<ScheduleStore.Done> decide(Fire f, String last) {
    Schedule s = f.schedule();
    Future<Boolean> running = last == null || s.overlap() == Schedule.Overlap.ALLOW ? Future.succeededFuture(false)
        : tx.status(last, s.owner()).map(st -> !st.status().isFinal()).recover(e -> Future.succeededFuture(false));
    return running.compose(busy -> {
      if (!busy) {
        return start(f);
      }
      return switch (s.overlap()) {
        case SKIP -> skipped(f, last);
        case QUEUE_ONE -> f.queuedFire() != null && f.queuedFire() != f.fire() ? skipped(f, last)
            : Future.succeededFuture(new ScheduleStore.Done(f.id(), f.fire(), "queued", last, null));
        case CANCEL_PREVIOUS -> tx.cancel(last, s.owner()).recover(e -> Future.succeededFuture(null))
            .compose(c -> start(f));
        case ALLOW -> start(f);
      };
    });
  }

  private Future<ScheduleStore.Done> skipped(Fire f, String last) {
    metrics.scheduleFire("skipped", 1, -1);
    return Future.succeededFuture(new ScheduleStore.Done(f.id(), f.fire(), "skipped", last,
        "the previous run " + last + " had not ended"));
  }

  private Future<ScheduleStore.Done> start(Fire f) {
    Schedule s = f.schedule();
    return tx.start(s.startBody(f.fire())).map(TxSummary::txId).recover(e -> {
      if (e instanceof TxException t && t.kind() == TxException.Kind.DUPLICATE_EXTERNAL_ID) {
        return Future.succeededFuture(t.txId()); // started before, by a leader that died before it said so
      }
      // a start its body can never make (e.g. a pipeline that gained a gate refuses its fires' externalIds) pauses
      // the schedule too, rather than driving the fire again forever
      if (e instanceof TxException t && (t.kind() == TxException.Kind.UNKNOWN_TYPE
          || t.kind() == TxException.Kind.PIPELINE_DISABLED || t.kind() == TxException.Kind.NOT_STARTABLE
          || t.kind() == TxException.Kind.INVALID_INPUT)) {
        return Future.failedFuture(new Paused(t.getMessage()));
      }
      return Future.failedFuture(e);
    }).map(txId -> {
      long lag = context.clock().millis() - (f.fire() + s.jitterOf(f.fire()));
      metrics.scheduleFire("started", 1, Math.max(0, lag));
      return new ScheduleStore.Done(f.id(), f.fire(), "started", txId, null);
    }).recover(e -> {
      if (e instanceof Paused p) {
        log.warn("schedule {} paused: {}", s.id(), p.getMessage());
        return Future.succeededFuture(new ScheduleStore.Done(f.id(), f.fire(), "paused", null, p.getMessage()));
      }
      return Future.failedFuture(e);
    });
  }

  /**
   * Its pipeline cannot be started (gone, disabled, not a transaction type, or refuses the schedule's start body):
   * the schedule is paused.
   */
  private static final class Paused extends RuntimeException {
    Paused(String message) {
      super(message, null, false, false);
    }
  }
}
