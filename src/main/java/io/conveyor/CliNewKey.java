package io.conveyor;

import io.conveyor.config.ApiKeyHash;
import io.conveyor.model.Strict;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * conveyor new-key OWNER [ROLE[+ROLE]] (client, step, admin): a fresh random API key, and the entry for api.keys
 * that holds only its hash. The key is printed once, here; config and logs never see it. Needs no Redis.
 */
@Command(name = "new-key", description = {"Make an API key and its api.keys entry.",
    "The entry holds only the key's hash; the key is printed once, here. Needs no Redis."}, footerHeading = "%nExample:%n",
    footer = "  conveyor new-key acme client+admin")
final class CliNewKey implements Callable<Integer> {
  private static final List<String> ROLES = List.of("client", "step", "admin");
  private final CliSession s;
  @Parameters(index = "0", paramLabel = "OWNER")
  String owner;
  @Parameters(index = "1", arity = "0..1", paramLabel = "ROLE[+ROLE]", description = "client (default), step or"
      + " admin; join several with +.")
  String roles = "client";

  CliNewKey(CliSession s) {
    this.s = s;
  }

  @Override
  public Integer call() {
    if (!owner.matches("[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}")) {
      throw new IllegalArgumentException("not an owner name: " + owner);
    }
    List<String> given = List.of(roles.split("\\+"));
    for (String role : given) {
      if (!ROLES.contains(role)) {
        throw new IllegalArgumentException("no role " + role + Strict.suggestion(role, ROLES)
            + " (roles: client, step, admin; join several with +)");
      }
    }
    byte[] random = new byte[24];
    new SecureRandom().nextBytes(random);
    String key = "ck_" + HexFormat.of().formatHex(random);
    JsonObject entry = new JsonObject().put("owner", owner).put("roles", new JsonArray(given))
        .put("sha256", ApiKeyHash.of(key));
    s.out.println("key:   " + key);
    s.out.println("entry: " + entry.encode() + "   (add it to api.keys in the config)");
    return Cli.OK;
  }
}
