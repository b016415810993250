package io.conveyor.database;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/**
 * What a text or jsonb column refuses, made storable and given back unchanged. PostgreSQL takes no NUL
 * (U+0000) in text nor a \u0000 escape in jsonb, and one such row used to stop the archive for everyone. A
 * string is stored with U+FFFF (a noncharacter, which both databases take) as an escape: U+FFFF becomes
 * U+FFFF U+FFFF and NUL becomes U+FFFF '0'. Every other string is stored as it is, so rows written before this
 * read the same. A state that needed the escape carries MARKER (a key no escaped name can equal: an escaped
 * U+FFFF is always followed by U+FFFF or '0'), and only such a state is unescaped on reading. docs/decisions.md
 * says why this and not bytes.
 */
final class NulSafe {
  static final char ESCAPE = '\uFFFF';
  static final String MARKER = ESCAPE + "nul-escaped";

  private NulSafe() {
  }

  /** A column's value: escaped, and unchanged when it holds neither NUL nor U+FFFF (null stays null). */
  static String column(String s) {
    if (s == null || !needs(s)) {
      return s;
    }
    StringBuilder b = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == ESCAPE) {
        b.append(ESCAPE).append(ESCAPE);
      } else if (c == '\0') {
        b.append(ESCAPE).append('0');
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** The original of a column's value (for a value written by column). */
  static String original(String s) {
    if (s == null || s.indexOf(ESCAPE) < 0) {
      return s;
    }
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == ESCAPE && i + 1 < s.length()) {
        b.append(s.charAt(++i) == '0' ? '\0' : ESCAPE);
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /** A JSON object as a jsonb or text column can hold it: itself when nothing in it needs the escape. */
  static JsonObject storable(JsonObject json) {
    if (json == null || !needs(json)) {
      return json;
    }
    JsonObject out = (JsonObject) map(json, true);
    return out.put(MARKER, true);
  }

  /** The object storable was given, from what it answered. */
  static JsonObject original(JsonObject stored) {
    if (stored == null || !stored.containsKey(MARKER)) {
      return stored;
    }
    JsonObject copy = stored.copy();
    copy.remove(MARKER);
    return (JsonObject) map(copy, false);
  }

  /** A row as a store reads it (tx_id, state and webhook as text), with what was escaped given back. */
  static ArchivedTx read(String txId, String state, String webhook) {
    ArchivedTx t = ArchivedTx.fromState(txId, original(new JsonObject(state)));
    return webhook == null ? t : new ArchivedTx(t.txId(), t.owner(), t.externalId(), t.type(), t.status(),
        t.created(), t.completed(), t.state(), original(new JsonObject(webhook)));
  }

  /** A JSON object's text for a column, escaped where needed (null stays null). */
  static String text(JsonObject json) {
    return json == null ? null : storable(json).encode();
  }

  private static boolean needs(String s) {
    return s.indexOf('\0') >= 0 || s.indexOf(ESCAPE) >= 0;
  }

  private static boolean needs(Object v) {
    if (v instanceof String s) {
      return needs(s);
    }
    if (v instanceof JsonObject o) {
      for (Map.Entry<String, Object> e : o) {
        if (needs(e.getKey()) || needs(e.getValue())) {
          return true;
        }
      }
    } else if (v instanceof JsonArray a) {
      for (Object e : a) {
        if (needs(e)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Every string in v (names included), escaped or unescaped. */
  private static Object map(Object v, boolean escape) {
    if (v instanceof String s) {
      return escape ? column(s) : original(s);
    }
    if (v instanceof JsonObject o) {
      JsonObject out = new JsonObject();
      o.forEach(e -> out.put((String) map(e.getKey(), escape), map(e.getValue(), escape)));
      return out;
    }
    if (v instanceof JsonArray a) {
      JsonArray out = new JsonArray();
      a.forEach(e -> out.add(map(e, escape)));
      return out;
    }
    return v;
  }
}
