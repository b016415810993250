package io.conveyor.api;

import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.redis.ControlStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pause, drain and resume a node group, for admins. The state lives in Redis (groupH:<group> in each
 * partition) and dequeue.lua reads it, so every node of the group stops taking work at once and a restarted
 * node finds the group as it was. A drain is a pause whose answer says when the group's in-flight work has
 * ended (drained); with ?wait=N it answers once that happens or after N seconds.
 */
final class GroupAdmin {
  private static final Logger log = LoggerFactory.getLogger(GroupAdmin.class);
  private static final String GROUP = "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}";
  private static final long WAIT_MAX_SECONDS = 300;
  private final Vertx vertx;
  private final ControlStore control;
  private final java.util.function.Function<String, Future<Boolean>> known;
  private final Ticker ticker;

  /** known tells whether a group exists: a pipeline names it or a live node serves it. */
  GroupAdmin(Vertx vertx, ControlStore control, java.util.function.Function<String, Future<Boolean>> known,
             Ticker ticker) {
    this.vertx = vertx;
    this.control = control;
    this.known = known;
    this.ticker = ticker;
  }

  /** Applies pause, drain, resume or read to a group; wait (seconds, or null) holds a drain's answer. */
  Future<JsonObject> act(String group, String action, String by, String wait) {
    String unclean = group == null ? null : io.conveyor.model.Identifiers.problem(group);
    if (unclean != null) {
      return Future.failedFuture(TxException.invalid("group", unclean));
    }
    if (group == null || !group.matches(GROUP)) {
      return Future.failedFuture(new TxException(Kind.INVALID_INPUT, "group: expected a node group name "
          + "(letters, digits, _ . -; up to 64), got " + group, "group", null));
    }
    long waitMs;
    try {
      waitMs = wait == null ? 0 : Long.parseLong(wait) * 1000;
      if (waitMs < 0 || waitMs > WAIT_MAX_SECONDS * 1000) {
        throw new NumberFormatException();
      }
    } catch (NumberFormatException e) {
      return Future.failedFuture(new TxException(Kind.INVALID_INPUT, "wait: expected whole seconds from 0 to "
          + WAIT_MAX_SECONDS + ", got " + wait, "wait", null));
    }
    // a typo must not answer "paused" while the real group runs on: acting on a group nobody has is 404
    Future<Boolean> exists = action.equals("read") ? Future.succeededFuture(true) : known.apply(group);
    return exists.compose(yes -> yes ? control.groupState(group, action, by)
        : Future.failedFuture(io.conveyor.domain.Groups.unknown(group)))
        .compose(s -> {
      if (!action.equals("read")) {
        log.info("group {} {} by {} ({} in flight, {} queued)", group, switch (action) {
          case "pause" -> "paused";
          case "drain" -> "draining";
          default -> "resumed";
        }, by, s.inFlight(), s.queued());
      }
      if (action.equals("drain") && waitMs > 0 && s.inFlight() > 0) {
        return drained(group, ticker.nanos() + waitMs * 1_000_000);
      }
      return Future.succeededFuture(s);
    }).map(ControlStore.GroupState::toJson).compose(j -> !action.equals("read") ? Future.succeededFuture(j)
        : control.waiting(group).map(j::mergeIn));
  }

  /** Reads the group's state every 100 ms until nothing is in flight, it is no longer draining, or the deadline. */
  private Future<ControlStore.GroupState> drained(String group, long deadline) {
    Promise<ControlStore.GroupState> done = Promise.promise();
    vertx.setTimer(100, t -> control.groupState(group, "read", null).onComplete(ar -> {
      if (ar.failed()) {
        done.fail(ar.cause());
      } else if (ar.result().inFlight() == 0 || !ar.result().state().equals("draining")
          || ticker.nanos() - deadline > 0) {
        done.complete(ar.result());
      } else {
        drained(group, deadline).onComplete(done);
      }
    }));
    return done.future();
  }
}
