package io.conveyor.domain;

import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.redis.MigrateStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.RedisUnavailable;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a pipeline's live transactions to another of its versions (issue 34): POST
 * /api/v1/admin/pipelines/{name}/migrate and `conveyor pipeline migrate`. The body is checked here (MigrateAsk),
 * then every partition's liveZ is walked a batch a script call (migrate.lua), the partitions side by side; the
 * answer adds up what each batch moved, marked (running: moved at its next step boundary) or could not move, and
 * why. A dry run (the default) counts the same and writes nothing.
 */
public final class Migrations {
  /** Entries of a partition's liveZ one script call looks at. */
  public static final int BATCH = 200;
  private static final Logger log = LoggerFactory.getLogger(Migrations.class);
  private static final Set<String> FIELDS = Set.of("from", "to", "stepMap", "dryRun", "undo");

  private final MigrateStore store;
  private final PipelineStore pipelines;
  private final int partitions;
  private final Ticker ticker;

  public Migrations(MigrateStore store, PipelineStore pipelines, int partitions, Ticker ticker) {
    this.store = store;
    this.pipelines = pipelines;
    this.partitions = partitions;
    this.ticker = ticker;
  }

  /** Runs the migration (or its dry run, or its undo) the body asks for; by names who asked. */
  public Future<JsonObject> run(String name, JsonObject body, String by) {
    MigrateAsk.Raw raw;
    try {
      raw = MigrateAsk.raw(body == null ? new JsonObject() : body, FIELDS);
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    return Future.all(pipelines.pipelines(), pipelines.versions(name)).compose(f -> {
      JsonObject all = f.resultAt(0);
      Map<String, JsonObject> versions = f.resultAt(1);
      if (versions.isEmpty()) {
        return Future.failedFuture(new TxException(Kind.NOT_FOUND, "no pipeline " + name
            + Strict.suggestion(name, all.fieldNames()), null, null));
      }
      String current = all.getValue(name) instanceof JsonObject p ? p.getString("version") : null;
      MigrateAsk ask = MigrateAsk.resolve(name, raw, current, versions);
      long began = ticker.nanos();
      return walkAll(name, ask, by).map(counts -> answer(name, ask, by, counts, (ticker.nanos() - began) / 1_000_000));
    }).recover(e -> Future.failedFuture(e instanceof RedisUnavailable ? Transactions.unavailable(e) : e));
  }

  private JsonObject answer(String name, MigrateAsk ask, String by, JsonObject counts, long tookMs) {
    JsonObject out = new JsonObject().put("pipeline", name).put("from", new JsonArray(ask.from()))
        .put("to", ask.to()).put("dryRun", ask.dryRun()).put("undo", ask.undo());
    if (!ask.undo()) {
      out.put("stepMap", ask.stepMapView());
    }
    out.mergeIn(counts).put("tookMs", tookMs);
    log.info("migrate {}{} to {} by {}{}: {} in {} ms", name, ask.undo() ? " (undo)" : "", ask.to(), by,
        ask.dryRun() ? " (dry run)" : "", counts.encode(), tookMs);
    return out;
  }

  /** Every partition walked, side by side; their counts added up. */
  private Future<JsonObject> walkAll(String name, MigrateAsk ask, String by) {
    List<Future<JsonObject>> walks = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      walks.add(walk(p, name, ask, by, MigrateStore.FIRST, new JsonObject()));
    }
    return Future.all(walks).map(f -> {
      JsonObject sum = ask.undo() ? new JsonObject().put("undone", 0L)
          : new JsonObject().put("moved", 0L).put("atBoundary", 0L).put("already", 0L);
      sum.put("cannot", new JsonObject()).put("batches", 0L);
      for (int i = 0; i < walks.size(); i++) {
        add(sum, f.resultAt(i));
      }
      return sum;
    });
  }

  private Future<JsonObject> walk(int p, String name, MigrateAsk ask, String by, MigrateStore.Batch after,
                                  JsonObject sum) {
    return store.batch(p, name, ask.mode(), ask.to(), ask.maps(), after, BATCH, by).compose(b -> {
      JsonObject counts = b.counts().copy().put("batches", 1L);
      if (ask.undo()) {
        counts.remove("moved");
        counts.remove("atBoundary");
        counts.remove("already");
      } else {
        counts.remove("undone");
      }
      add(sum, counts);
      return b.done() ? Future.succeededFuture(sum) : walk(p, name, ask, by, b, sum);
    });
  }

  /** Adds counts into sum: numbers and, under cannot, each reason's number. */
  private static void add(JsonObject sum, JsonObject counts) {
    for (String k : counts.fieldNames()) {
      if (counts.getValue(k) instanceof JsonObject reasons) {
        JsonObject into = sum.getJsonObject(k, new JsonObject());
        reasons.fieldNames().forEach(r -> into.put(r, into.getLong(r, 0L) + reasons.getLong(r)));
        sum.put(k, into);
      } else if (counts.getValue(k) instanceof Number n) {
        sum.put(k, sum.getLong(k, 0L) + n.longValue());
      }
    }
  }
}
