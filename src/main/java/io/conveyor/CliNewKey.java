package io.conveyor;

import io.conveyor.config.ApiKeyHash;
import io.conveyor.model.Strict;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * conveyor new-key OWNER [ROLE[+ROLE]] (client, step, admin): a fresh random API key, and the entry for api.keys
 * that holds only its hash. The key is printed once, here; config and logs never see it. Needs no Redis.
 */
final class CliNewKey {
  static final String HELP = "new-key OWNER [ROLE[+ROLE]]   (a fresh API key and the api.keys entry holding its hash)\n"
      + "    conveyor new-key acme client+admin";
  private static final List<String> ROLES = List.of("client", "step", "admin");

  private CliNewKey() {
  }

  /** Cli's exit codes. */
  static int run(List<String> args, PrintStream out, PrintStream err) {
    if (args.contains("--help")) {
      out.print(Cli.usage("new-key"));
      return Cli.OK;
    }
    if (args.size() < 2 || !args.get(1).matches("[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}")) {
      err.print(Cli.usage("new-key"));
      return Cli.USAGE;
    }
    List<String> roles = List.of((args.size() > 2 ? args.get(2) : "client").split("\\+"));
    for (String role : roles) {
      if (!ROLES.contains(role)) {
        err.println("conveyor: new-key: no role " + role + Strict.suggestion(role, ROLES)
            + " (roles: client, step, admin; join several with +)");
        return Cli.USAGE;
      }
    }
    byte[] random = new byte[24];
    new SecureRandom().nextBytes(random);
    String key = "ck_" + HexFormat.of().formatHex(random);
    JsonObject entry = new JsonObject().put("owner", args.get(1)).put("roles", new JsonArray(roles))
        .put("sha256", ApiKeyHash.of(key));
    out.println("key:   " + key);
    out.println("entry: " + entry.encode() + "   (add it to api.keys in the config)");
    return Cli.OK;
  }
}
