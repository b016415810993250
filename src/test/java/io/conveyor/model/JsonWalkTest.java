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
        .put("buf", Buffer.buffer("hello")).put("kind", Kind.SEALED_V1_).put("f", 1.0f / 3)
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
    return switch (r.nextInt(9)) {
      case 0, 1 -> tree(r, depth + 1);
      case 2 -> text(r);
      case 3 -> r.nextLong();
      case 4 -> r.nextDouble() * Math.pow(10, r.nextInt(600) - 300);
      case 5 -> r.nextBoolean();
      case 6 -> null;
      case 7 -> r.nextInt();
      default -> text(r) + text(r);
    };
  }

  private static String text(Random r) {
    StringBuilder b = new StringBuilder();
    for (int i = r.nextInt(4); i > 0; i--) {
      b.append(TEXTS[r.nextInt(TEXTS.length)]);
    }
    return b.toString();
  }
}
