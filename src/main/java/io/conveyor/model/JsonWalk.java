package io.conveyor.model;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Questions about a JSON value (a JsonObject, JsonArray, or what they hold) answered by walking it, not by
 * encoding it: the hot path asks them of every step's output and every run's input, and an encoding of a large
 * value is as large again in garbage. A value of a type the walk does not know exactly (an enum, whose text Jackson
 * may take from an annotation; a number class of a step's own; a map key that is not a String; any other class)
 * sends the caller to the encoding, which is also where a value that cannot be encoded fails, alone.
 */
public final class JsonWalk {
  /** A number's longest text (Double.toString, Long.MIN_VALUE), quotes of a date or an enum's name aside. */
  private static final int NUMBER_BYTES = 25;
  /** An encoded character takes at most six bytes (a control character as a six-character escape; others at most three in UTF-8). */
  private static final int CHAR_BYTES = 6;
  /** The walk met a type it cannot size or read: encode to know. */
  public static final long UNKNOWN = Long.MAX_VALUE;
  /** Deeper than this (or a value that holds itself) is left to the encoding, which has its own limit. */
  private static final int MAX_DEPTH = 500;

  private JsonWalk() {
  }

  /**
   * An upper bound of the value's JSON encoding in UTF-8 bytes, or a number above stopAbove as soon as the bound
   * passes it (the walk stops there), or UNKNOWN when it holds a type the walk does not know.
   */
  public static long utf8Bound(Object json, long stopAbove) {
    return bound(json, 0, stopAbove, 0);
  }

  private static long bound(Object v, long sum, long stop, int depth) {
    if (sum > stop || sum == UNKNOWN) {
      return sum;
    }
    if (depth > MAX_DEPTH) {
      return UNKNOWN;
    }
    if (v instanceof JsonObject o) {
      return bound(o.getMap(), sum, stop, depth);
    }
    if (v instanceof JsonArray a) {
      return bound(a.getList(), sum, stop, depth);
    }
    if (v instanceof Map<?, ?> m) {
      long s = sum + 2;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!(e.getKey() instanceof String key)) {
          return UNKNOWN;
        }
        // "key": value,
        s = bound(e.getValue(), s + 4 + (long) CHAR_BYTES * key.length(), stop, depth + 1);
        if (s > stop || s == UNKNOWN) {
          return s;
        }
      }
      return s;
    }
    if (v instanceof List<?> l) {
      long s = sum + 2;
      for (Object e : l) {
        s = bound(e, s + 1, stop, depth + 1);
        if (s > stop || s == UNKNOWN) {
          return s;
        }
      }
      return s;
    }
    if (v instanceof String c) {
      return sum + 2 + (long) CHAR_BYTES * c.length();
    }
    if (v == null || v instanceof Boolean) {
      return sum + 5;
    }
    if (v instanceof BigDecimal || v instanceof BigInteger) {
      return sum + v.toString().length() + 2;
    }
    if (v instanceof Integer || v instanceof Long || v instanceof Double || v instanceof Float || v instanceof Short
        || v instanceof Byte) {
      return sum + NUMBER_BYTES; // NaN and the infinities are written quoted: at most 11
    }
    if (v instanceof Instant) {
      return sum + 2 + 40;
    }
    if (v instanceof byte[] b) {
      return sum + 2 + 4L * (b.length / 3 + 1);
    }
    if (v instanceof Buffer b) {
      return sum + 2 + 4L * (b.length() / 3 + 1);
    }
    return UNKNOWN;
  }

  /**
   * Whether any text of the value (a field name or a string, at any depth) contains needle: what
   * json.encode().contains(needle) says for a needle of letters, digits and ':', which no encoding escapes and
   * no other token holds. Null when it holds a type the walk does not know exactly (as utf8Bound).
   */
  public static Boolean anyTextContains(Object json, String needle) {
    return contains(json, needle, 0);
  }

  private static Boolean contains(Object json, String needle, int depth) {
    if (depth > MAX_DEPTH) {
      return null;
    }
    if (json instanceof JsonObject o) {
      return contains(o.getMap(), needle, depth);
    }
    if (json instanceof JsonArray a) {
      return contains(a.getList(), needle, depth);
    }
    if (json instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!(e.getKey() instanceof String key)) {
          return null;
        }
        if (key.contains(needle)) {
          return true;
        }
        Boolean in = contains(e.getValue(), needle, depth + 1);
        if (in == null || in) {
          return in;
        }
      }
      return false;
    }
    if (json instanceof List<?> l) {
      for (Object e : l) {
        Boolean in = contains(e, needle, depth + 1);
        if (in == null || in) {
          return in;
        }
      }
      return false;
    }
    if (json instanceof String c) {
      return c.contains(needle);
    }
    if (json == null || json instanceof Boolean || json instanceof Integer || json instanceof Long
        || json instanceof Double || json instanceof Float || json instanceof Short || json instanceof Byte
        || json instanceof BigDecimal || json instanceof BigInteger || json instanceof Instant
        || json instanceof byte[] || json instanceof Buffer) {
      return false; // their texts are digits, true/false/null, a date, or base64: never the needle
    }
    return null;
  }
}
