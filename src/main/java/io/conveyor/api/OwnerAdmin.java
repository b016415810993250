package io.conveyor.api;

import io.conveyor.config.Config;
import io.conveyor.model.Pipeline;
import io.conveyor.model.StartRequest;
import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.OwnerStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owners' limits for admins: a weight (its share of a group's queue under fair share), a concurrency cap and a
 * rate limit, each per node group. Set at run time and kept in Redis, so every node applies them at once (see
 * OwnerStore); a weight set here replaces transactions.ownerWeights for the owner.
 */
final class OwnerAdmin {
  private static final Logger log = LoggerFactory.getLogger(OwnerAdmin.class);
  private final OwnerStore store;
  private final Config.Transactions settings;
  private final Config.Limits defaults;
  /** The largest maxLive and maxPayloadBytes an admin may set for one owner. */
  static final int MOST_LIVE = 10_000_000;
  static final int MOST_PAYLOAD_BYTES = 64 * 1024 * 1024;

  OwnerAdmin(OwnerStore store, Config.Transactions settings) {
    this(store, settings, Config.Limits.DEFAULTS);
  }

  /** defaults: limits.maxLive and limits.maxPayloadBytes, what applies to an owner with none of its own. */
  OwnerAdmin(OwnerStore store, Config.Transactions settings, Config.Limits defaults) {
    this.store = store;
    this.settings = settings;
    this.defaults = defaults;
  }

  /** Every owner with limits set through the API, and every owner with a weight in the config. */
  Future<JsonObject> list() {
    return store.list().map(set -> {
      java.util.TreeSet<String> owners = new java.util.TreeSet<>(set.fieldNames());
      owners.addAll(settings.ownerWeights().keySet());
      JsonArray out = new JsonArray();
      for (String o : owners) {
        JsonObject limits = set.getJsonObject(o, new JsonObject());
        out.add(view(o, new OwnerStore.Limits(limits.getInteger("weight"), limits.getInteger("maxConcurrency"),
            limits.getString("rateLimit"), limits.getInteger("maxLive"), limits.getInteger("maxPayloadBytes"), 0)));
      }
      return new JsonObject().put("owners", out).put("ownerShare", settings.ownerShare());
    });
  }

  Future<JsonObject> get(String owner) {
    return checked(owner).compose(v -> store.get(owner))
        .map(l -> view(owner, l));
  }

  /**
   * Replaces an owner's limits with the body's: {weight, maxConcurrency, rateLimit, maxLive, maxPayloadBytes}, each
   * optional (absent: the default applies).
   */
  Future<JsonObject> put(String owner, JsonObject body) {
    OwnerStore.Limits limits;
    try {
      check(owner);
      Strict.fields(body, List.of("weight", "maxConcurrency", "rateLimit", "maxLive", "maxPayloadBytes"));
      limits = new OwnerStore.Limits(whole(body, "weight", 1000), whole(body, "maxConcurrency", 1_000_000),
          rate(body), whole(body, "maxLive", MOST_LIVE), whole(body, "maxPayloadBytes", MOST_PAYLOAD_BYTES), 0);
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
    return store.put(owner, limits).map(v -> {
      log.info("owner {}: limits set through the API: {}", owner, OwnerStore.json(limits).encode());
      return view(owner, limits);
    });
  }

  Future<JsonObject> delete(String owner) {
    return checked(owner).compose(v -> store.put(owner, new OwnerStore.Limits(null, null, null, 0))).map(v -> {
      log.info("owner {}: limits cleared through the API", owner);
      return view(owner, new OwnerStore.Limits(null, null, null, 0));
    });
  }

  /**
   * What applies to an owner: each limit, where its weight comes from (api, config or default), and its maxLive and
   * maxPayloadBytes (its own, else limits.maxLive and limits.maxPayloadBytes) with where each comes from.
   */
  private JsonObject view(String owner, OwnerStore.Limits l) {
    Integer weight = l.weight();
    Integer configured = settings.ownerWeights().get(owner);
    int effective = weight != null ? weight : configured != null ? configured : 1;
    return new JsonObject().put("owner", owner).put("weight", effective)
        .put("weightFrom", weight != null ? "api" : configured != null ? "config" : "default")
        .put("share", settings.ownerShare() * effective)
        .put("maxConcurrency", l.maxConcurrency()).put("rateLimit", l.rateLimit())
        .put("maxLive", l.maxLive() != null ? l.maxLive() : defaults.maxLive())
        .put("maxLiveFrom", l.maxLive() != null ? "api" : "default")
        .put("maxPayloadBytes", l.maxPayloadBytes() != null ? l.maxPayloadBytes() : defaults.maxPayloadBytes())
        .put("maxPayloadBytesFrom", l.maxPayloadBytes() != null ? "api" : "default");
  }

  private static Integer whole(JsonObject body, String field, int max) {
    Object v = body.getValue(field);
    if (v == null) {
      return null;
    }
    if (!(v instanceof Integer i) || i < 1 || i > max) {
      throw TxException.invalid(field, "expected a whole number from 1 to " + max + " (absent or null: not set), got "
          + v);
    }
    return i;
  }

  private static String rate(JsonObject body) {
    Object v = body.getValue("rateLimit");
    if (v == null) {
      return null;
    }
    if (!(v instanceof String s) || !s.matches(Pipeline.RATE_LIMIT)) {
      throw TxException.invalid("rateLimit", "expected a count per second, minute or hour such as \"100/s\" or "
          + "\"30/m\" (1 to 9999999; absent or null: not set), got " + v);
    }
    return s;
  }

  private static Future<Void> checked(String owner) {
    try {
      check(owner);
      return Future.succeededFuture();
    } catch (TxException e) {
      return Future.failedFuture(e);
    }
  }

  private static void check(String owner) {
    io.conveyor.model.Identifiers.check("owner", owner);
    if (owner == null || !StartRequest.OWNER.matches(owner)) {
      throw TxException.invalid("owner", "expected an owner name (letters, digits, '_', '.', '@' or '-'; at most "
          + "128, starting with a letter or digit), got " + owner);
    }
  }
}
