package io.conveyor.config;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The api.keys list: each entry as a config file holds it (hashed) or as CONVEYOR_API_KEYS gives it (plain). */
final class ApiKeysReader {
  static final Set<String> KEY_ROLES = Set.of("client", "admin", "step");

  private ApiKeysReader() {
  }

  /**
   * API keys: objects {owner, roles, sha256} as config files hold them, or "owner:role[+role]:key" strings
   * (as CONVEYOR_API_KEYS gives them for a quick start), hashed here. A key never appears in a message.
   */
  static List<Config.ApiKey> read(ConfigReader r, String path) {
    Object v = r.raw(path);
    if (!(v instanceof JsonArray list)) {
      throw new ConfigException("config key " + path + " (env " + ConfigLoader.envName(path) + "): expected a list");
    }
    List<Config.ApiKey> keys = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      keys.add(apiKey(list.getValue(i), path + "[" + i + "]"));
    }
    return List.copyOf(keys);
  }

  private static Config.ApiKey apiKey(Object entry, String where) {
    if (entry instanceof String s) {
      String[] parts = s.split(":", 3);
      if (parts.length == 3 && !parts[0].isBlank() && !parts[2].isBlank()) {
        return new Config.ApiKey(ApiKeyHash.of(parts[2]), parts[0], keyRoles(List.of(parts[1].split("\\+")), where));
      }
      throw new ConfigException("config key " + where + ": expected owner:role[+role]:key (the key is not shown)");
    }
    if (entry instanceof JsonObject o && o.getValue("owner") instanceof String owner
        && o.getValue("sha256") instanceof String hash && hash.matches("[0-9a-f]{64}")
        && o.getValue("roles") instanceof JsonArray roles) {
      return new Config.ApiKey(hash, owner, keyRoles(roles.getList(), where));
    }
    throw new ConfigException("config key " + where + ": expected {\"owner\": …, \"roles\": [\"client\"], "
        + "\"sha256\": \"<64 hex>\"} (print one with: java -jar target/conveyor.jar new-key OWNER)");
  }

  private static List<String> keyRoles(List<?> roles, String where) {
    List<String> out = new ArrayList<>();
    for (Object r : roles) {
      if (!KEY_ROLES.contains(r)) {
        throw new ConfigException("config key " + where + ": roles must be from " + KEY_ROLES + ", got " + r);
      }
      out.add((String) r);
    }
    return List.copyOf(out);
  }
}
