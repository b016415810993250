package io.conveyor.api;

import io.conveyor.config.ApiKeyHash;
import io.conveyor.config.Config;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Who an API key belongs to and what it may do, looked up by the key's hash. */
public final class ApiKeys {

  /** The owner a key acts for, its roles (client, admin) and its id (AuditEntry.keyId: never the key). */
  public record Principal(String owner, List<String> roles, String keyId) {
    public boolean has(String role) {
      return roles.contains(role);
    }
  }

  private final Map<String, Principal> byHash = new HashMap<>();

  public ApiKeys(List<Config.ApiKey> keys) {
    keys.forEach(k -> byHash.put(k.sha256(), new Principal(k.owner(), k.roles(),
        io.conveyor.model.AuditEntry.keyId(k.sha256()))));
  }

  public Optional<Principal> authenticate(String key) {
    return key == null || key.isEmpty() ? Optional.empty() : Optional.ofNullable(byHash.get(ApiKeyHash.of(key)));
  }
}
