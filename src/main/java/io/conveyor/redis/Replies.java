package io.conveyor.redis;

import io.vertx.core.json.JsonObject;
import io.vertx.redis.client.Response;
import java.util.function.BiConsumer;

/** Reading Redis replies: nil-safe strings, JSON fields, hash replies in RESP2 or RESP3. */
final class Replies {
  private Replies() {
  }

  static String str(Response r) {
    return r == null ? null : r.toString();
  }

  static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  static JsonObject json(Response r) {
    String s = str(r);
    return s == null || s.isEmpty() ? null : new JsonObject(s);
  }

  /** {field, value, …} as a flat list, into a JSON object of strings. */
  static JsonObject flatHash(Response flat) {
    JsonObject out = new JsonObject();
    for (int f = 0; f + 1 < flat.size(); f += 2) {
      out.put(flat.get(f).toString(), flat.get(f + 1).toString());
    }
    return out;
  }

  /** Each field and value of a hash reply, as RESP3 gives it (a map) or RESP2 (a flat list). */
  static void hash(Response r, BiConsumer<String, Response> each) {
    java.util.Set<String> names;
    try {
      names = r.getKeys();
    } catch (RuntimeException e) {
      names = null;
    }
    if (names != null && !names.isEmpty()) {
      names.forEach(k -> each.accept(k, r.get(k)));
    } else {
      for (int f = 0; f + 1 < r.size(); f += 2) {
        each.accept(r.get(f).toString(), r.get(f + 1));
      }
    }
  }
}
