package io.conveyor.api;

import io.conveyor.domain.Transactions;
import io.conveyor.model.Identifiers;
import io.conveyor.model.Schedule;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxException;
import io.conveyor.redis.Code;
import io.conveyor.redis.ScheduleStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Schedules for admins: list (with the next five fire times), read, create or replace, delete, pause, resume and
 * trigger (one run now, outside the fire times). Each answer shows the definition, its state (paused, by whom and
 * why), what it ran (last run with its status, fires, misses, skipped overlaps) and its next fire times.
 */
public record ScheduleAdmin(ScheduleStore store, Transactions tx, Clock clock) {
  private static final Logger log = LoggerFactory.getLogger(ScheduleAdmin.class);

  public Future<JsonObject> list() {
    return store.ids().compose(ids -> {
      List<Future<JsonObject>> each = ids.stream().map(this::view).toList();
      return Future.all(each).map(all -> {
        JsonArray out = new JsonArray();
        each.forEach(f -> {
          if (f.result() != null) {
            out.add(f.result());
          }
        });
        return new JsonObject().put("schedules", out);
      });
    });
  }

  public Future<JsonObject> get(String id) {
    return checked(id).compose(v -> view(id)).compose(v -> v == null ? Future.failedFuture(notFound(id))
        : Future.succeededFuture(v));
  }

  Future<JsonObject> put(String id, JsonObject body) {
    Schedule s;
    try {
      checkId(id);
      s = Schedule.fromJson(body, id);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(TxException.invalid("schedule", e.getMessage()));
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    long now = clock.millis();
    return store.put(id, s.toJson(), now, s.paused(), ScheduleStore.Next.after(s, now)).compose(code -> {
      log.info("schedule {} {} through the API", id, code == Code.KEPT ? "not replaced (a newer version is current)"
          : "published");
      return view(id);
    });
  }

  Future<JsonObject> delete(String id) {
    return checked(id).compose(v -> store.delete(id)).compose(code -> code == Code.NOT_FOUND
        ? Future.failedFuture(notFound(id))
        : Future.succeededFuture(new JsonObject().put("id", id).put("deleted", true)));
  }

  public Future<JsonObject> setPaused(String id, boolean paused, String by) {
    return definition(id).compose(s -> store.setPaused(id, paused, by, paused ? "paused through the API" : null,
        paused ? ScheduleStore.Next.NONE : ScheduleStore.Next.after(s, clock.millis()))).compose(code -> view(id));
  }

  /** One run now, with fire time now (its own externalId), whatever the overlap policy. */
  public Future<JsonObject> trigger(String id) {
    long now = clock.millis();
    return definition(id).compose(s -> tx.start(s.startBody(now))
        .compose(started -> store.done(store.partitionOf(id), List.of(new ScheduleStore.Done(id, now, "started",
            started.txId(), null))).map(n -> started.txId())))
        .compose(txId -> view(id).map(v -> v.put("triggered", txId)));
  }

  private Future<Schedule> definition(String id) {
    return checked(id).compose(v -> store.get(id)).compose(h -> {
      if (h == null || h.getString("definition") == null) {
        return Future.failedFuture(notFound(id));
      }
      return Future.succeededFuture(Schedule.fromJson(new JsonObject(h.getString("definition")), id));
    });
  }

  /** The schedule as the API shows it, or null when there is none. */
  private Future<JsonObject> view(String id) {
    return store.get(id).compose(h -> {
      if (h == null || h.getString("definition") == null) {
        return Future.succeededFuture(null);
      }
      Schedule s = Schedule.fromJson(new JsonObject(h.getString("definition")), id);
      JsonObject out = new JsonObject().put("id", id).put("definition", s.toJson())
          .put("paused", "1".equals(h.getString("paused")));
      if ("1".equals(h.getString("paused"))) {
        out.put("pausedBy", h.getString("pausedBy")).put("pauseReason", h.getString("pauseReason"));
      }
      JsonArray next = new JsonArray();
      if (!"1".equals(h.getString("paused"))) {
        long from = h.getString("nextFire") == null ? clock.millis() : Long.parseLong(h.getString("nextFire")) - 1;
        s.next(from, 5).forEach(t -> next.add(Instant.ofEpochMilli(t).toString()));
      }
      out.put("nextFires", next).put("fires", num(h, "fires")).put("misses", num(h, "misses"))
          .put("skipped", num(h, "skipped"));
      String last = h.getString("lastTxId");
      if (last == null) {
        return Future.succeededFuture(out);
      }
      JsonObject lastRun = new JsonObject().put("txId", last).put("fireTime",
          Instant.ofEpochMilli(Long.parseLong(h.getString("lastFire", "0"))).toString());
      out.put("lastRun", lastRun);
      return tx.status(last, s.owner()).map(st -> {
        lastRun.put("status", st.status().wire());
        return out;
      }).recover(e -> Future.succeededFuture(out));
    });
  }

  private static long num(JsonObject h, String field) {
    return h.getString(field) == null ? 0 : Long.parseLong(h.getString(field));
  }

  private static Future<Void> checked(String id) {
    try {
      checkId(id);
      return Future.succeededFuture();
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(TxException.invalid("id", e.getMessage()));
    }
  }

  private static void checkId(String id) {
    String unclean = id == null ? null : Identifiers.problem(id);
    if (unclean != null) {
      throw new IllegalArgumentException(unclean);
    }
    if (id == null || !Schedule.ID.matcher(id).matches()) {
      throw new IllegalArgumentException("expected letters, digits, '_', '.' or '-' (at most 64), got " + id);
    }
  }

  private static TxException notFound(String id) {
    return new TxException(Kind.NOT_FOUND, "no schedule " + id, null, null);
  }
}
