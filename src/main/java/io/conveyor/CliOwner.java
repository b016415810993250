package io.conveyor;

import static io.conveyor.CliArgs.whole;

import io.conveyor.model.Identifiers;
import io.conveyor.model.Pipeline;
import io.conveyor.model.StartRequest;
import io.conveyor.redis.OwnerStore;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** conveyor owner list | owner show|clear OWNER | owner set OWNER …: an owner's limits. */
@Command(name = "owner", description = {"List, show, set or clear owners' limits.",
    "Fair-share weight, concurrency cap, rate limit, live transactions and payload size (README: Limits)."},
    footerHeading = "%nExample:%n", footer = "  conveyor owner set acme --max-concurrency 20 --rate-limit 100/s")
final class CliOwner {
  private final CliSession s;

  CliOwner(CliSession s) {
    this.s = s;
  }

  @Command(name = "list", description = "Every owner with limits set, and its limits.")
  int list() {
    JsonObject all = new OwnerStore(s.tx().context()).list().await();
    all.forEach(e -> s.out.println(s.json() ? new JsonObject().put("owner", e.getKey())
        .mergeIn((JsonObject) e.getValue()).encode() : e.getKey() + "  " + ((JsonObject) e.getValue()).encode()));
    if (!s.json() && all.isEmpty()) {
      s.out.println("no owner has limits set");
    }
    return Cli.OK;
  }

  @Command(name = "show", description = "An owner's limits.")
  int show(@Parameters(paramLabel = "OWNER") String owner) {
    return print(checked(owner));
  }

  @Command(name = "clear", description = "Drop an owner's limits (the defaults apply again).")
  int clear(@Parameters(paramLabel = "OWNER") String owner) {
    new OwnerStore(s.tx().context()).put(checked(owner), new OwnerStore.Limits(null, null, null, 0)).await();
    return print(owner);
  }

  @Command(name = "set", description = "Set an owner's limits (those given; the others are dropped).")
  int set(@Parameters(paramLabel = "OWNER") String owner,
          @Option(names = "--weight", paramLabel = "N", description = "Fair-share weight (1-1000).") String weight,
          @Option(names = "--max-concurrency", paramLabel = "N", description = "Running at once (1-1000000).")
          String cap,
          @Option(names = "--rate-limit", paramLabel = "R", description = "Taken per second, minute or hour:"
              + " 100/s, 30/m, 500/h.") String rate,
          @Option(names = "--max-live", paramLabel = "N", description = "Live transactions (1-10000000).")
          String maxLive,
          @Option(names = "--max-payload-bytes", paramLabel = "N", description = "Input or output bytes.")
          String maxPayload) {
    checked(owner);
    if (rate != null && !rate.matches(Pipeline.RATE_LIMIT)) {
      throw new IllegalArgumentException("--rate-limit: a count per second, minute or hour such as 100/s, got "
          + rate);
    }
    OwnerStore.Limits limits = new OwnerStore.Limits(whole(weight, "--weight", 1000), whole(cap, "--max-concurrency",
        1_000_000), rate, whole(maxLive, "--max-live", 10_000_000), whole(maxPayload, "--max-payload-bytes",
        64 * 1024 * 1024), 0);
    new OwnerStore(s.tx().context()).put(owner, limits).await();
    return print(owner);
  }

  private static String checked(String owner) {
    String unclean = Identifiers.problem(owner);
    if (unclean != null) {
      throw new IllegalArgumentException("OWNER " + unclean);
    }
    if (!StartRequest.OWNER.matches(owner)) {
      throw new IllegalArgumentException("not an owner name: " + owner);
    }
    return owner;
  }

  private int print(String owner) {
    JsonObject l = OwnerStore.json(new OwnerStore(s.tx().context()).get(owner).await());
    s.out.println(s.json() ? new JsonObject().put("owner", owner).mergeIn(l).encode() : owner + "  " + l.encode());
    return Cli.OK;
  }
}
