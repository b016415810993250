package io.conveyor;

import static io.conveyor.CliArgs.arg;
import static io.conveyor.CliArgs.option;

import io.conveyor.api.AdminApi;
import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.database.ArchiveStore;
import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.ReadStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The operator's command line, in the jar: it works on the Redis (and archive) of the config, through the same
 * scripts and stores the node uses, so it needs no node's API key. Each command prints readable lines, or with
 * --json one JSON document per line. Exit codes: 0 done, 1 refused (not found, not allowed now), 2 bad usage
 * (an unknown option, a malformed value), 3 Redis or the archive unreachable. `help` and `COMMAND --help` show usage with examples.
 */
final class Cli {
  static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);
  static final int OK = 0;
  static final int REFUSED = 1;
  static final int USAGE = 2;
  static final int UNAVAILABLE = 3;

  /** Each command: its usage line and an example or two. */
  static final Map<String, String> HELP = new LinkedHashMap<>();

  static {
    HELP.put("start", "start TYPE [INPUT_JSON] [--owner NAME] [--external-id ID] [--delay D | --start-at TIME] [--wait]\n"
        + "    conveyor start order '{\"sku\":\"A-1\"}' --owner acme --wait");
    HELP.put("status", "status TXID [--owner NAME]   (live or archived; without --owner, any owner's)\n"
        + "    conveyor status tx-0f3a… --json");
    HELP.put("list", "list [--status S[,S…]] [--pipeline P] [--owner O] [--external-id X] [--from TIME] [--to TIME]\n"
        + "     [--q TEXT] [--limit N] [--cursor C] [--all]   (search, live and archived, newest first; search is the same)\n"
        + "    conveyor list --status failed --pipeline order --from 2026-11-24T00:00:00Z\n"
        + "    conveyor search --q 'order-17' --all --json");
    HELP.put("cancel", "cancel TXID   (ends it cancelled: at once when it waits, at its next step when it runs)\n"
        + "    conveyor cancel tx-0f3a…");
    HELP.put("retry", "retry TXID [--from-start]   (runs an ended transaction again, from the failed step or the start)\n"
        + "    conveyor retry tx-0f3a… --from-start");
    HELP.put("switch", "switch TXID NAME VALUE_JSON   (sets a switch a waiting step listens for)\n"
        + "    conveyor switch tx-0f3a… approved true");
    HELP.put("wake", "wake TXID   (a sleeping transaction runs at the reaper's next round)\n"
        + "    conveyor wake tx-0f3a…");
    HELP.put("tail", "tail [--kind K] [--subject S] [--limit N] [--follow [--for SECONDS]]   (operational events, oldest\n"
        + "     first; --follow prints new ones as they come, until interrupted or --for runs out)\n"
        + "    conveyor tail --kind node-dead --follow");
    HELP.put("group", "group pause|drain|resume|status GROUP [--wait]   (drain --wait: until nothing of it is in flight)\n"
        + "    conveyor group drain master --wait");
    HELP.put("schedule", "schedule list | schedule show|pause|resume|trigger ID\n"
        + "    conveyor schedule trigger nightly-report");
    HELP.put("owner", "owner list | owner show|clear OWNER | owner set OWNER [--weight N] [--max-concurrency N]\n"
        + "     [--rate-limit R] [--max-live N] [--max-payload-bytes N]   (an owner's limits)\n"
        + "    conveyor owner set acme --max-concurrency 20 --rate-limit 100/s");
    HELP.put("archive-quarantine", CliQuarantine.HELP);
    HELP.put("new-key", CliNewKey.HELP);
  }

  private final PrintStream out;
  private final PrintStream err;
  private final boolean json;

  private Cli(PrintStream out, PrintStream err, boolean json) {
    this.out = out;
    this.err = err;
    this.json = json;
  }

  static boolean handles(String[] args) {
    return args.length > 0 && (HELP.containsKey(args[0]) || List.of("search", "help", "--help").contains(args[0]));
  }

  /** The usage of every command, or of one. */
  static String usage(String command) {
    if (command != null && HELP.containsKey(command)) {
      return "usage: java -jar conveyor.jar " + HELP.get(command) + "\n";
    }
    StringBuilder b = new StringBuilder("usage: java -jar conveyor.jar COMMAND … [--config FILE] [--json]\n"
        + "Works on the Redis and archive of the config (conf/config.json, CONVEYOR_* variables). Exit codes: 0 done,"
        + " 1 refused, 2 bad usage, 3 Redis or the archive unreachable.\n\n");
    HELP.values().forEach(h -> b.append("  ").append(h).append("\n\n"));
    return b.toString();
  }

  /** new-key: see CliNewKey. */
  static int newKey(List<String> args) {
    return CliNewKey.run(args, System.out, System.err);
  }

  static int run(List<String> args, Config config) {
    return run(args, config, System.out, System.err);
  }

  /** Runs the command; the exit code is OK, REFUSED, USAGE or UNAVAILABLE. */
  static int run(List<String> given, Config config, PrintStream out, PrintStream err) {
    List<String> args = new ArrayList<>(given);
    boolean json = args.remove("--json");
    String command = args.isEmpty() ? "help" : args.get(0);
    if (command.equals("help") || command.equals("--help")) {
      out.print(usage(args.size() > 1 ? args.get(1) : null));
      return OK;
    }
    if (command.equals("new-key")) {
      return CliNewKey.run(args, out, err);
    }
    if (args.contains("--help")) {
      out.print(usage(command.equals("search") ? "list" : command));
      return OK;
    }
    Vertx vertx = Vertx.vertx();
    Transactions tx = null;
    try {
      Cli cli = new Cli(out, err, json);
      checkOptions(command, args);
      tx = ClientRoot.transactions(vertx, config);
      return cli.dispatch(vertx, tx, command, args);
    } catch (TxException e) {
      err.println("conveyor: " + (json ? e.toJson().encode() : e.getMessage()));
      return switch (e.kind()) {
        case UNAVAILABLE -> UNAVAILABLE;
        case INVALID_INPUT -> USAGE;
        default -> REFUSED;
      };
    } catch (ConfigException e) {
      err.println("conveyor: " + e.getMessage());
      return USAGE;
    } catch (IllegalArgumentException | IndexOutOfBoundsException | DecodeException e) {
      err.println("conveyor: " + (e instanceof IndexOutOfBoundsException ? "missing an argument" : e.getMessage()));
      err.print(usage(command.equals("search") ? "list" : command));
      return USAGE;
    } catch (RuntimeException e) {
      // Redis or the archive could not be reached or answered with an error
      err.println("conveyor: cannot reach Redis or the archive: " + e.getMessage());
      return UNAVAILABLE;
    } finally {
      if (tx != null) {
        tx.archive().onSuccess(a -> {
          if (a != null) {
            a.close();
          }
        });
      }
      vertx.close().await();
    }
  }

  /** Options each command takes (with a value, or a flag): an unknown one is refused, never ignored. */
  private static final Map<String, List<String>> OPTIONS = Map.ofEntries(
      Map.entry("start", List.of("--owner=", "--external-id=", "--delay=", "--start-at=", "--wait")),
      Map.entry("status", List.of("--owner=")),
      Map.entry("list", List.of("--status=", "--pipeline=", "--owner=", "--external-id=", "--from=", "--to=", "--q=",
          "--limit=", "--cursor=", "--all")),
      Map.entry("cancel", List.of()), Map.entry("retry", List.of("--from-start")), Map.entry("switch", List.of()),
      Map.entry("wake", List.of()),
      Map.entry("tail", List.of("--kind=", "--subject=", "--limit=", "--follow", "--for=")),
      Map.entry("group", List.of("--wait")), Map.entry("schedule", List.of()),
      Map.entry("owner", List.of("--weight=", "--max-concurrency=", "--rate-limit=", "--max-live=",
          "--max-payload-bytes=")),
      Map.entry("archive-quarantine", CliQuarantine.OPTIONS));

  private static void checkOptions(String command, List<String> args) {
    List<String> known = OPTIONS.get(command.equals("search") ? "list" : command);
    if (known == null) {
      throw new IllegalArgumentException("no command " + command + Strict.suggestion(command,
          HELP.keySet()));
    }
    for (int i = 1; i < args.size(); i++) {
      String a = args.get(i);
      if (!a.startsWith("--")) {
        continue;
      }
      if (known.contains(a + "=")) {
        if (i + 1 >= args.size()) {
          throw new IllegalArgumentException(a + " needs a value");
        }
        i++;
      } else if (!known.contains(a)) {
        List<String> names = known.stream().map(k -> k.replace("=", "")).toList();
        throw new IllegalArgumentException(command + ": unknown option " + a
            + Strict.suggestion(a, names) + (names.isEmpty() ? "" : "; options: "
            + String.join(" ", names)));
      }
    }
  }

  private int dispatch(Vertx vertx, Transactions tx, String command, List<String> args) {
    AdminApi admin = AdminApi.of(tx, tx.archive().await());
    String owner = option(args, "--owner", null);
    switch (command) {
      case "start" -> print(start(vertx, tx, args, owner == null ? "cli" : owner));
      case "status" -> print(owner == null ? admin.status(arg(args, 1, "TXID")).await()
          : tx.status(arg(args, 1, "TXID"), owner).await());
      case "list", "search" -> {
        return list(tx, args);
      }
      case "cancel" -> printCancelled(admin.cancelTree(arg(args, 1, "TXID")).await());
      case "retry" -> print(admin.rerun(arg(args, 1, "TXID"), args.contains("--from-start")).await());
      case "switch" -> print(admin.setSwitch(arg(args, 1, "TXID"), arg(args, 2, "NAME"),
          Json.decodeValue(arg(args, 3, "VALUE_JSON"))).await());
      case "wake" -> print(admin.wake(arg(args, 1, "TXID")).await());
      case "tail" -> {
        return new CliTail(out, json).run(vertx, tx, args);
      }
      case "group" -> {
        return new CliGroup(out, json).run(vertx, tx, args);
      }
      case "schedule" -> {
        return new CliSchedule(out, json).run(tx, args);
      }
      case "archive-quarantine" -> {
        return new CliQuarantine(tx.context(), out, json).run(args);
      }
      default -> {
        return new CliOwner(out, json).run(tx, args);
      }
    }
    return OK;
  }

  /** A cancel's summary, and how much of its tree the cancel walk has still to reach (the reaper carries it on). */
  private void printCancelled(Transactions.Cancelled c) {
    if (json) {
      JsonObject j = c.summary().toJson();
      out.println((c.pending() == 0 ? j : j.put("cancelPending", c.pending())).encode());
      return;
    }
    print(c.summary());
    if (c.pending() > 0) {
      out.println("cancel walk: at least " + c.pending() + " of its tree still to cancel; the reaper leader goes on");
    }
  }

  private void print(TxSummary s) {
    if (json) {
      out.println(s.toJson().encode());
      return;
    }
    JsonObject j = s.toJson();
    out.println(s.txId() + "  " + s.type() + "  " + s.status().wire() + " (" + s.processingState() + ")  owner "
        + s.owner() + (s.externalId() == null ? "" : "  externalId " + s.externalId()) + "  created " + s.created()
        + (s.completed() == null ? "" : "  completed " + s.completed()));
    if (j.getValue("output") != null) {
      out.println("  output: " + Json.encode(j.getValue("output")));
    }
    if (s.note() != null) {
      out.println("  note: " + s.note());
    }
  }

  private static TxSummary start(Vertx vertx, Transactions tx, List<String> args, String owner) {
    JsonObject body = new JsonObject().put("type", arg(args, 1, "TYPE")).put("owner", owner)
        .put("externalId", option(args, "--external-id", null)).put("delay", option(args, "--delay", null))
        .put("startAt", option(args, "--start-at", null))
        .put("input", args.size() > 2 && !args.get(2).startsWith("--") ? new JsonObject(args.get(2)) : new JsonObject());
    TxSummary started = tx.start(body).await();
    return args.contains("--wait") ? untilFinal(vertx, tx, started, Ticker.SYSTEM.nanos() + WAIT_NANOS).await()
        : started;
  }

  /** list/search: a page (or, with --all, every page) of the search, one transaction a line. */
  private int list(Transactions tx, List<String> args) {
    Map<String, String> params = new LinkedHashMap<>();
    for (String[] o : new String[][] {{"--status", "status"}, {"--pipeline", "pipeline"}, {"--owner", "owner"},
        {"--external-id", "externalId"}, {"--from", "from"}, {"--to", "to"}, {"--q", "q"}, {"--limit", "limit"},
        {"--cursor", "cursor"}}) {
      String v = option(args, o[0], null);
      if (v != null) {
        params.put(o[1], v);
      }
    }
    Search search = new Search(new ReadStore(tx.context()), tx.context().keys(), tx.archive().await());
    int shown = 0;
    while (true) {
      JsonObject page = search.run(Search.parse(params, null)).await();
      for (Object o : page.getJsonArray("transactions")) {
        JsonObject t = (JsonObject) o;
        shown++;
        out.println(json ? t.encode() : t.getString("txId") + "  " + t.getString("type") + "  " + t.getString("phase")
            + "  owner " + t.getString("owner") + "  created " + t.getString("created")
            + (t.getString("externalId") == null ? "" : "  externalId " + t.getString("externalId")));
      }
      String next = page.getString("next");
      if (next == null) {
        break;
      }
      if (!args.contains("--all")) {
        // a short page with a cursor is a walk cut by its time budget, never "no match"
        if (!json && page.getBoolean("partial", false)) {
          out.println("stopped after its time budget (" + Search.BUDGET.toMillis() + " ms), having looked down to "
              + "created " + page.getString("scannedTo") + "; go on with the cursor below, or --all");
        }
        out.println(json ? new JsonObject().put("next", next).put("partial", page.getBoolean("partial", false))
            .put("scannedTo", page.getString("scannedTo")).encode() : "more: --cursor " + next);
        return OK;
      }
      params.put("cursor", next);
    }
    if (!json && shown == 0) {
      out.println("no transaction matches");
    }
    return OK;
  }

  /** Polls until the transaction ends or the deadline (Ticker.SYSTEM) passes. */
  private static Future<TxSummary> untilFinal(Vertx vertx, Transactions tx, TxSummary s, long deadline) {
    if (s.status().isFinal() || Ticker.SYSTEM.nanos() - deadline > 0) {
      return Future.succeededFuture(s);
    }
    Promise<Void> tick = Promise.promise();
    vertx.setTimer(20, t -> tick.complete());
    return tick.future().compose(v -> tx.status(s.txId(), s.owner())).compose(n -> untilFinal(vertx, tx, n, deadline));
  }
}
