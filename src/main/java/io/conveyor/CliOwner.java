package io.conveyor;

import static io.conveyor.CliArgs.arg;
import static io.conveyor.CliArgs.option;
import static io.conveyor.CliArgs.whole;

import io.conveyor.domain.Transactions;
import io.conveyor.model.Identifiers;
import io.conveyor.model.Pipeline;
import io.conveyor.model.StartRequest;
import io.conveyor.redis.OwnerStore;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.List;

/** conveyor owner list | owner show|clear OWNER | owner set OWNER …: an owner's limits. */
record CliOwner(PrintStream out, boolean json) {
  /** owner list | owner show|clear OWNER | owner set OWNER [--weight N] [--max-concurrency N] [--rate-limit R]. */
  int run(Transactions tx, List<String> args) {
    OwnerStore store = new OwnerStore(tx.context());
    String action = arg(args, 1, "list, show, set or clear");
    if (action.equals("list")) {
      JsonObject all = store.list().await();
      all.forEach(e -> out.println(json ? new JsonObject().put("owner", e.getKey()).mergeIn((JsonObject) e.getValue())
          .encode() : e.getKey() + "  " + ((JsonObject) e.getValue()).encode()));
      if (!json && all.isEmpty()) {
        out.println("no owner has limits set");
      }
      return Cli.OK;
    }
    String name = arg(args, 2, "OWNER");
    String unclean = Identifiers.problem(name);
    if (unclean != null) {
      throw new IllegalArgumentException("OWNER " + unclean);
    }
    if (!StartRequest.OWNER.matcher(name).matches()) {
      throw new IllegalArgumentException("not an owner name: " + name);
    }
    switch (action) {
      case "show" -> { }
      case "clear" -> store.put(name, new OwnerStore.Limits(null, null, null, 0)).await();
      case "set" -> {
        Integer weight = whole(option(args, "--weight", null), "--weight", 1000);
        Integer cap = whole(option(args, "--max-concurrency", null), "--max-concurrency", 1_000_000);
        String rate = option(args, "--rate-limit", null);
        if (rate != null && !rate.matches(Pipeline.RATE_LIMIT)) {
          throw new IllegalArgumentException("--rate-limit: a count per second, minute or hour such as 100/s, got "
              + rate);
        }
        store.put(name, new OwnerStore.Limits(weight, cap, rate, whole(option(args, "--max-live", null), "--max-live",
            10_000_000), whole(option(args, "--max-payload-bytes", null), "--max-payload-bytes", 64 * 1024 * 1024), 0))
            .await();
      }
      default -> throw new IllegalArgumentException("owner: expected list, show, set or clear, got " + action);
    }
    JsonObject l = OwnerStore.json(store.get(name).await());
    out.println(json ? new JsonObject().put("owner", name).mergeIn(l).encode() : name + "  " + l.encode());
    return Cli.OK;
  }
}
