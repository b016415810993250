package io.conveyor.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** JsonWalk's answers against the encoding they stand in for, on edge values and on 5,000 random trees. */
class JsonWalkTest {
  private static final String NEEDLE = "sealed:v1:";
  private static final String[] TEXTS = {"", "a", "\u0000", "\n\t\"\\", "\u0001\u001f", "é", "日本語", "\uD83D\uDE00",
      "sealed:v1:abc", "x sealed:v1:", "sealed", "v1:", "sealed:v1", "SEALED:V1:", "\u2028\u2029", "</script>"};

  private enum Kind { FIRST, SEALED_V1_ }

  private static int utf8(Object json) {
    String text = json instanceof JsonObject o ? o.encode() : ((JsonArray) json).encode();
    return text.getBytes(StandardCharsets.UTF_8).length;
  }

  private static String encoded(Object json) {
    return json instanceof JsonObject o ? o.encode() : ((JsonArray) json).encode();
  }

  private static void holds(Object json) {
    long bound = JsonWalk.utf8Bound(json, Long.MAX_VALUE - 1);
    assertTrue(bound >= utf8(json), () -> "bound " + bound + " under " + utf8(json) + " for " + encoded(json));
    assertEquals(encoded(json).contains(NEEDLE), JsonWalk.anyTextContains(json, NEEDLE), () -> encoded(json));
  }

  @Test
  void edge_values_are_bounded_and_searched_as_their_encoding_says() {
    JsonObject o = new JsonObject().put("n", Long.MIN_VALUE).put("d", -1.2345678901234567E-300).put("t", true)
        .putNull("z").put("big", new BigDecimal("1" + "0".repeat(500) + ".5")).put("bi", BigInteger.TWO.pow(300))
        .put("at", Instant.parse("2026-11-29T13:00:00.123456789Z")).put("bytes", new byte[] {0, 1, 2, 3, 4})
        .put("buf", Buffer.buffer("hello")).put("f", 1.0f / 3).put("nan", Double.NaN)
        .put("inf", Double.NEGATIVE_INFINITY).put("raw", new java.util.HashMap<>(java.util.Map.of("m", java.util.List.of(
            "sealed:v", java.util.Map.of("k", (short) 7, "b", (byte) -8)))))
        .put("arr", new JsonArray().add(new JsonArray()).add(new JsonObject()).addNull().add("sealed").add("v1:"));
    for (String t : TEXTS) {
      o.put("k" + t, t);
    }
    holds(o);
    holds(new JsonObject());
    holds(new JsonArray());
    holds(new JsonObject().put("sealed", "v1:x"));
    assertFalse(JsonWalk.anyTextContains(new JsonObject().put("sealed", "v1:x"), NEEDLE));
    assertTrue(JsonWalk.anyTextContains(new JsonObject().put("a", new JsonArray().add(new JsonObject()
        .put("deep", "sealed:v1:k1:..."))), NEEDLE));
    assertTrue(JsonWalk.anyTextContains(new JsonObject().put("sealed:v1:key", 1), NEEDLE));
  }

  @Test
  void what_jackson_may_write_its_own_way_sends_the_caller_to_the_encoding() {
    java.util.Map<Object, Object> nullKey = new java.util.HashMap<>();
    nullKey.put(null, "x");
    java.util.Map<Object, Object> enumKey = new java.util.HashMap<>();
    enumKey.put(Kind.FIRST, "x");
    java.util.Map<String, Object> itself = new java.util.HashMap<>();
    itself.put("me", itself); // a step's own map that holds itself: left to the encoding, not walked for ever
    Object[] odd = {Kind.SEALED_V1_, new StringBuilder("sealed:v1:"), new java.util.concurrent.atomic.AtomicLong(3),
        nullKey, enumKey, itself};
    for (Object o : odd) {
      JsonObject holder = new JsonObject().put("a", new JsonArray().add(new JsonObject().put("b", o)));
      assertEquals(JsonWalk.UNKNOWN, JsonWalk.utf8Bound(holder, Long.MAX_VALUE - 1), o.getClass().getName());
      assertNull(JsonWalk.anyTextContains(holder, NEEDLE), o.getClass().getName());
    }
  }

  @Test
  void a_walk_stops_once_past_the_limit_and_a_type_it_does_not_know_sends_the_caller_to_the_encoding() {
    JsonArray many = new JsonArray();
    for (int i = 0; i < 10_000; i++) {
      many.add("0123456789");
    }
    long stopped = JsonWalk.utf8Bound(many, 100);
    assertTrue(stopped > 100 && stopped < 1_000, "stopped at " + stopped);
    Object odd = new Object();
    assertEquals(JsonWalk.UNKNOWN, JsonWalk.utf8Bound(new JsonObject().put("x", new JsonObject()
        .put("y", new JsonArray().add(odd))), 1_000_000));
    assertNull(JsonWalk.anyTextContains(new JsonArray().add(odd), NEEDLE));
  }

  @Test
  void random_trees_never_exceed_their_bound_and_are_searched_as_encoded() {
    Random random = new Random(37);
    for (int i = 0; i < 5_000; i++) {
      holds(tree(random, 0));
    }
  }

  private static Object tree(Random r, int depth) {
    if (r.nextBoolean()) {
      JsonObject o = new JsonObject();
      for (int i = r.nextInt(depth > 3 ? 2 : 6); i > 0; i--) {
        o.put(text(r) + i, value(r, depth));
      }
      return o;
    }
    JsonArray a = new JsonArray();
    for (int i = r.nextInt(depth > 3 ? 2 : 6); i > 0; i--) {
      a.add(value(r, depth));
    }
    return a;
  }

  private static Object value(Random r, int depth) {
    return switch (r.nextInt(16)) {
      case 0, 1 -> tree(r, depth + 1);
      case 2 -> text(r);
      case 3 -> r.nextLong();
      case 4 -> r.nextDouble() * Math.pow(10, r.nextInt(600) - 300);
      case 5 -> r.nextBoolean();
      case 6 -> null;
      case 7 -> r.nextInt();
      case 8 -> new BigDecimal(r.nextLong()).scaleByPowerOfTen(r.nextInt(80) - 40);
      case 9 -> r.nextFloat() * (float) Math.pow(10, r.nextInt(70) - 35);
      case 10 -> new byte[r.nextInt(20)];
      case 11 -> Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000));
      case 12 -> new double[] {Double.NaN, Double.POSITIVE_INFINITY, -0.0, Double.MIN_VALUE}[r.nextInt(4)];
      case 13 -> depth > 3 ? "deep" : rawMap(text(r) + "k", value(r, depth + 1)); // a raw map in a tree
      case 14 -> depth > 3 ? 1 : java.util.Arrays.asList(value(r, depth + 1), value(r, depth + 1)); // a raw list
      default -> text(r) + text(r);
    };
  }

  private static java.util.Map<String, Object> rawMap(String key, Object value) {
    java.util.Map<String, Object> m = new java.util.HashMap<>();
    m.put(key, value);
    return m;
  }

  private static String text(Random r) {
    StringBuilder b = new StringBuilder();
    for (int i = r.nextInt(4); i > 0; i--) {
      b.append(TEXTS[r.nextInt(TEXTS.length)]);
    }
    return b.toString();
  }
}
