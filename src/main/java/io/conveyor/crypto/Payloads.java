package io.conveyor.crypto;

import io.conveyor.config.Config;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Seals and opens the payloads of the owners encryption is on for (security.encryption.owners), bound to the
 * owner, the transaction and the field. A JSON object (input, output, metadata, a step's output) is stored as an
 * envelope, {"$sealed": "sealed:v1:…", "tx": txId}, so every script and parser that expects an object still gets
 * one and needs nothing of its content; tx names the transaction it was sealed for, so an envelope a script copies
 * into another transaction (a child's output into its parent, a parent's metadata into a child) still opens. A text
 * (an error's message, a note) is stored as the sealed text itself. Other
 * owners' payloads pass as they are, and so does anything not sealed when opened. Use it on one verticle's context.
 */
public final class Payloads {
  /** The key of a sealed object's envelope that holds the sealed text; "tx" names the transaction. */
  public static final String ENVELOPE = "$sealed";
  /** The key of a sealed metadata's envelope that holds its searchable fields in clear. */
  public static final String CLEAR = "clear";
  private final Config.Encryption config;
  private final DataKeys keys;

  public Payloads(Config.Encryption config, DataKeys keys) {
    this.config = config;
    this.keys = keys;
  }

  /** Payloads that are never sealed (encryption off). */
  public static Payloads off() {
    return new Payloads(Config.Encryption.OFF, null);
  }

  /** Whether the owner's payloads are sealed. */
  public boolean sealsFor(String owner) {
    return config.sealsFor(owner);
  }

  /** Whether an object is a sealed envelope. */
  public static boolean isEnvelope(JsonObject o) {
    return o != null && o.getValue(ENVELOPE) instanceof String s && Sealer.isSealed(s)
        && o.fieldNames().stream().allMatch(k -> k.equals(ENVELOPE) || k.equals("tx") || k.equals(CLEAR));
  }

  /** The text to store for a text: sealed for an owner with encryption on, else as it is (null stays null). */
  public Future<String> seal(String owner, String txId, String field, String text) {
    if (text == null || owner == null || !config.sealsFor(owner)) {
      return Future.succeededFuture(text);
    }
    return keys.forSealing(owner)
        .map(k -> Sealer.seal(k.key(), k.version(), Sealer.aad(owner, txId, field), text));
  }

  /** The object to store: its envelope for an owner with encryption on, else itself (null stays null). */
  public Future<JsonObject> seal(String owner, String txId, String field, JsonObject value) {
    if (value == null || owner == null || !config.sealsFor(owner)) {
      return Future.succeededFuture(value);
    }
    return seal(owner, txId, field, value.encode()).map(s -> clear(field, value,
        new JsonObject().put(ENVELOPE, s).put("tx", txId)));
  }

  /**
   * The metadata fields kept in clear for search (security.encryption.searchableMetadata), after the sealed text:
   * a search matches only from "clear" on (search.lua, ArchiveQuery), never in the base64 before it.
   */
  private JsonObject clear(String field, JsonObject value, JsonObject envelope) {
    if (!"metadata".equals(field) || config.searchableMetadata().isEmpty()) {
      return envelope;
    }
    JsonObject clear = new JsonObject();
    config.searchableMetadata().forEach(f -> {
      if (value.containsKey(f)) {
        clear.put(f, value.getValue(f));
      }
    });
    return clear.isEmpty() ? envelope : envelope.put(CLEAR, clear);
  }

  /** An error entry to store: its message sealed (field "error"), the rest (step, code, times) clear. */
  public Future<JsonObject> sealError(String owner, String txId, JsonObject error) {
    if (error == null || owner == null || !config.sealsFor(owner) || !(error.getValue("message") instanceof String m)) {
      return Future.succeededFuture(error);
    }
    return seal(owner, txId, "error", m).map(s -> error.copy().put("message", s));
  }

  /**
   * The clear text of a stored text: opened when sealed (whatever the setting says now: an owner may have had
   * encryption on before), else as it is. Fails with SealedException when it cannot be opened (its key shredded).
   */
  public Future<String> open(String owner, String txId, String field, String stored) {
    if (!Sealer.isSealed(stored)) {
      return Future.succeededFuture(stored);
    }
    if (keys == null) {
      return Future.failedFuture(new SealedException("a sealed value on a node without a master key "
          + "(security.encryption.masterKey)"));
    }
    int version;
    try {
      version = Sealer.keyVersion(stored);
    } catch (SealedException e) {
      return Future.failedFuture(e);
    }
    return keys.forOpening(owner, version).map(k -> Sealer.open(k.key(), Sealer.aad(owner, txId, field), stored));
  }

  /** The clear object of a stored one: its envelope opened (for the transaction it names), else as it is. */
  public Future<JsonObject> open(String owner, String txId, String field, JsonObject stored) {
    if (!isEnvelope(stored)) {
      return Future.succeededFuture(stored);
    }
    return open(owner, stored.getString("tx", txId), field, stored.getString(ENVELOPE)).map(JsonObject::new);
  }

  /**
   * A stored object with every envelope in it opened, however deep (a parallel step's join holds its branches'
   * outputs, each sealed for its branch); one that does not open fails the whole.
   */
  public Future<JsonObject> openAll(String owner, String txId, String field, JsonObject stored) {
    if (stored == null || isEnvelope(stored) || !stored.encode().contains("\"" + ENVELOPE + "\"")) {
      return open(owner, txId, field, stored);
    }
    return openValue(owner, txId, field, stored).map(v -> (JsonObject) v);
  }

  private Future<Object> openValue(String owner, String txId, String field, Object value) {
    if (value instanceof JsonObject o) {
      if (isEnvelope(o)) {
        return open(owner, txId, field, o).map(v -> v);
      }
      List<String> names = new ArrayList<>(o.fieldNames());
      List<Future<Object>> each = names.stream().map(n -> openValue(owner, txId, field, o.getValue(n))).toList();
      return Future.all(each).map(all -> {
        JsonObject out = new JsonObject();
        for (int i = 0; i < names.size(); i++) {
          out.put(names.get(i), each.get(i).result());
        }
        return out;
      });
    }
    if (value instanceof JsonArray a) {
      List<Future<Object>> each = new ArrayList<>(a.size());
      a.forEach(v -> each.add(openValue(owner, txId, field, v)));
      return Future.all(each).map(all -> new JsonArray(each.stream().map(Future::result).toList()));
    }
    return Future.succeededFuture(value);
  }

  /** The same for a stored object's JSON text (a field of the state as Redis holds it); not JSON: as it is. */
  public Future<String> openJson(String owner, String txId, String field, String stored) {
    if (stored == null || !stored.startsWith("{\"" + ENVELOPE)) {
      return Future.succeededFuture(stored);
    }
    JsonObject envelope;
    try {
      envelope = new JsonObject(stored);
    } catch (RuntimeException e) {
      return Future.succeededFuture(stored); // not JSON after all: shown as it is
    }
    return open(owner, txId, field, envelope).map(JsonObject::encode);
  }

  /** What was opened, or, when it cannot be (SealedException: its key shredded), the stored value as it is. */
  public static <T> Future<T> orSealed(Future<T> opened, T stored) {
    return opened.recover(e -> e instanceof SealedException ? Future.succeededFuture(stored) : Future.failedFuture(e));
  }

  /** Stored error entries with their messages opened; one that cannot be opened keeps its sealed text. */
  public Future<JsonArray> openErrors(String owner, String txId, JsonArray errors) {
    if (errors == null || errors.isEmpty()) {
      return Future.succeededFuture(errors);
    }
    List<Future<Object>> each = new ArrayList<>(errors.size());
    for (Object e : errors) {
      if (e instanceof JsonObject o && Sealer.isSealed(o.getString("message"))) {
        each.add(orSealed(open(owner, txId, "error", o.getString("message")).<Object>map(m -> o.copy()
            .put("message", m)), o));
      } else {
        each.add(Future.succeededFuture(e));
      }
    }
    return Future.all(each).map(all -> new JsonArray(all.list()));
  }
}
