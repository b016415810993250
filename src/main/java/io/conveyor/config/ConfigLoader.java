package io.conveyor.config;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads the config: the defaults shipped in the jar (a copy of conf/config.json), then the file given,
 * then environment variables CONVEYOR_ + the key's path in upper snake case (redis.url → CONVEYOR_REDIS_URL,
 * archive.batchSize → CONVEYOR_ARCHIVE_BATCH_SIZE; lists comma-separated).
 */
public final class ConfigLoader {
  private static final String DEFAULTS = "/conveyor-defaults/config.json";

  private ConfigLoader() {
  }

  /** Loads from a file (null for defaults only) and an environment; throws ConfigException on a bad value. */
  public static Config load(Path file, Map<String, String> env) {
    JsonObject tree = defaults();
    if (file != null) {
      overlay(tree, readFile(file), "", file.toString());
    }
    checkEnv(tree, env);
    applyEnv(tree, "", env);
    return ConfigReader.read(tree);
  }

  /**
   * A CONVEYOR_ variable that names no setting is a typo, so it stops the node, naming the nearest setting's
   * variable. CONVEYOR_TEST_ variables belong to the test suite and are left alone.
   */
  private static void checkEnv(JsonObject tree, Map<String, String> env) {
    java.util.Set<String> known = new java.util.TreeSet<>();
    envNames(tree, "", known);
    for (String name : env.keySet()) {
      if (name.startsWith("CONVEYOR_") && !name.startsWith("CONVEYOR_TEST_") && !known.contains(name)) {
        throw new ConfigException("environment variable " + name + " names no setting"
            + Names.suggestion(name, known) + "; each setting's variable is CONVEYOR_ and its "
            + "key in upper snake case (the keys are in conf/config.json)");
      }
    }
  }

  private static void envNames(JsonObject tree, String prefix, java.util.Set<String> out) {
    for (String key : tree.fieldNames()) {
      Object value = tree.getValue(key);
      if (value instanceof JsonObject section && !section.isEmpty()) {
        envNames(section, prefix + key + ".", out);
      } else {
        out.add(envName(prefix + key));
      }
    }
  }

  /** The settings and their defaults, as shipped. */
  public static JsonObject defaults() {
    try (InputStream in = ConfigLoader.class.getResourceAsStream(DEFAULTS)) {
      if (in == null) {
        throw new IllegalStateException("the jar lacks " + DEFAULTS);
      }
      return new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + DEFAULTS, e);
    }
  }

  /** CONVEYOR_ + path in upper snake case, camelCase words split. */
  public static String envName(String path) {
    return "CONVEYOR_" + path.replace('.', '_').replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase();
  }

  private static JsonObject readFile(Path file) {
    try {
      return new JsonObject(Files.readString(file));
    } catch (IOException e) {
      throw new ConfigException("config file " + file + ": cannot read it (" + e.getMessage() + ")");
    } catch (DecodeException | ClassCastException e) {
      throw new ConfigException("config file " + file + ": not a JSON object (" + firstLine(e.getMessage()) + ")");
    }
  }

  /** Copies the file's values over the defaults; a key the defaults lack is a typo, so it stops the node. */
  private static void overlay(JsonObject base, JsonObject file, String prefix, String source) {
    for (Map.Entry<String, Object> e : file) {
      String path = prefix + e.getKey();
      if (!base.containsKey(e.getKey())) {
        throw new ConfigException("config file " + source + ": unknown key " + path
            + " (the known keys and their defaults are in conf/config.json)");
      }
      Object current = base.getValue(e.getKey());
      if (current instanceof JsonObject section) {
        if (!(e.getValue() instanceof JsonObject given)) {
          throw new ConfigException("config key " + path + ": expected an object of settings");
        }
        if (section.isEmpty()) {
          base.put(e.getKey(), given); // an empty object in the defaults is a map of the user's own keys
        } else {
          overlay(section, given, path + ".", source);
        }
      } else {
        base.put(e.getKey(), e.getValue());
      }
    }
  }

  private static void applyEnv(JsonObject tree, String prefix, Map<String, String> env) {
    for (String key : tree.fieldNames()) {
      String path = prefix + key;
      Object value = tree.getValue(key);
      if (value instanceof JsonObject section && !section.isEmpty()) {
        applyEnv(section, path + ".", env);
        continue;
      }
      String text = env.get(envName(path));
      if (text != null) {
        tree.put(key, fromEnv(text, value));
      }
    }
  }

  /** Environment values are text; they take the JSON type of the default so the typed reader sees one form. */
  private static Object fromEnv(String text, Object model) {
    if (model instanceof JsonObject) {
      // a map of the user's own keys (e.g. http.ownerStartRates): key=value pairs, comma-separated
      JsonObject map = new JsonObject();
      for (String part : text.split(",")) {
        if (part.isBlank()) {
          continue;
        }
        int eq = part.indexOf('=');
        if (eq <= 0) {
          throw new ConfigException("environment variable value " + part.trim() + ": expected key=value pairs, "
              + "comma-separated (e.g. acme=100,globex=50)");
        }
        String v = part.substring(eq + 1).trim();
        map.put(part.substring(0, eq).trim(), v.matches("-?\\d{1,9}") ? (Object) Integer.parseInt(v) : v);
      }
      return map;
    }
    if (model instanceof JsonArray) {
      JsonArray list = new JsonArray();
      for (String part : text.split(",")) {
        if (!part.isBlank()) {
          list.add(part.trim());
        }
      }
      return list;
    }
    return text.trim();
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.lines().findFirst().orElse("");
  }
}
