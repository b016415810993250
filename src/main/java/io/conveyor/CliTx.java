package io.conveyor;

import io.conveyor.domain.Transactions;
import io.conveyor.model.TxSummary;
import io.conveyor.time.Ticker;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The commands on one transaction: start, status, cancel, retry, switch, wake (any owner's, as an admin). */
final class CliTx {
  private CliTx() {
  }

  @Command(name = "start", description = "Start a transaction (owner cli unless --owner).",
      footerHeading = "%nExample:%n", footer = "  conveyor start order '{\"sku\":\"A-1\"}' --owner acme --wait")
  static final class Start implements Callable<Integer> {
    private final CliSession s;
    @Parameters(index = "0", paramLabel = "TYPE", description = "The transaction type (a startable pipeline).")
    String type;
    @Parameters(index = "1", arity = "0..1", paramLabel = "INPUT_JSON", description = "Its input (default {}).")
    String input;
    @Option(names = "--owner", paramLabel = "NAME", description = "The owner (default cli).")
    String owner = "cli";
    @Option(names = "--external-id", paramLabel = "ID", description = "The caller's id for it, unique per owner.")
    String externalId;
    @Option(names = "--delay", paramLabel = "D", description = "Start it after this long (30s, 5m, 2h).")
    String delay;
    @Option(names = "--start-at", paramLabel = "TIME", description = "Start it at this time (ISO-8601).")
    String startAt;
    @Option(names = "--wait", description = "Poll until it ends (60 s at most) and print where it ended.")
    boolean await;

    Start(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      JsonObject body = new JsonObject().put("type", type).put("owner", owner).put("externalId", externalId)
          .put("delay", delay).put("startAt", startAt).put("input", input == null ? new JsonObject()
              : new JsonObject(input));
      TxSummary started = s.tx().start(body).await();
      print(s, await ? untilFinal(s, started, Ticker.SYSTEM.nanos() + Cli.WAIT_NANOS) : started);
      return Cli.OK;
    }
  }

  @Command(name = "status", description = {"Show a transaction, live or archived.",
      "Any owner's; with --owner, only that owner's."}, footerHeading = "%nExample:%n", footer = "  conveyor status tx-0f3a… --json")
  static final class Status implements Callable<Integer> {
    private final CliSession s;
    @Parameters(paramLabel = "TXID")
    String txId;
    @Option(names = "--owner", paramLabel = "NAME", description = "Only this owner's.")
    String owner;

    Status(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      print(s, owner == null ? s.admin().status(txId).await() : s.tx().status(txId, owner).await());
      return Cli.OK;
    }
  }

  @Command(name = "cancel", description = {"Cancel a transaction and its children.",
      "It ends cancelled at once when it waits, at its next step when it runs."}, footerHeading = "%nExample:%n", footer = "  conveyor cancel tx-0f3a…")
  static final class Cancel implements Callable<Integer> {
    private final CliSession s;
    @Parameters(paramLabel = "TXID")
    String txId;

    Cancel(CliSession s) {
      this.s = s;
    }

    /** A cancel's summary, and how much of its tree the cancel walk has still to reach (the reaper goes on). */
    @Override
    public Integer call() {
      Transactions.Cancelled c = s.admin().cancelTree(txId).await();
      if (s.json()) {
        JsonObject j = c.summary().toJson();
        s.out.println((c.pending() == 0 ? j : j.put("cancelPending", c.pending())).encode());
        return Cli.OK;
      }
      print(s, c.summary());
      if (c.pending() > 0) {
        s.out.println("cancel walk: at least " + c.pending() + " of its tree still to cancel; the reaper leader goes on");
      }
      return Cli.OK;
    }
  }

  @Command(name = "retry", description = {"Run an ended transaction again.",
      "From the step that failed, or with --from-start from its first step."},
      footerHeading = "%nExample:%n", footer = "  conveyor retry tx-0f3a… --from-start")
  static final class Retry implements Callable<Integer> {
    private final CliSession s;
    @Parameters(paramLabel = "TXID")
    String txId;
    @Option(names = "--from-start", description = "From its first step, not the failed one.")
    boolean fromStart;

    Retry(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      print(s, s.admin().rerun(txId, fromStart).await());
      return Cli.OK;
    }
  }

  @Command(name = "switch", description = "Set a switch a waiting step listens for.",
      footerHeading = "%nExample:%n", footer = "  conveyor switch tx-0f3a… approved true")
  static final class Switch implements Callable<Integer> {
    private final CliSession s;
    @Parameters(index = "0", paramLabel = "TXID")
    String txId;
    @Parameters(index = "1", paramLabel = "NAME")
    String name;
    @Parameters(index = "2", paramLabel = "VALUE_JSON", description = "Any JSON value: true, 3, '\"text\"', '{…}'.")
    String value;

    Switch(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      print(s, s.admin().setSwitch(txId, name, Json.decodeValue(value)).await());
      return Cli.OK;
    }
  }

  @Command(name = "wake", description = {"Wake a sleeping transaction.", "It runs at the reaper's next round."},
      footerHeading = "%nExample:%n", footer = "  conveyor wake tx-0f3a…")
  static final class Wake implements Callable<Integer> {
    private final CliSession s;
    @Parameters(paramLabel = "TXID")
    String txId;

    Wake(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      print(s, s.admin().wake(txId).await());
      return Cli.OK;
    }
  }

  /** A summary: its JSON, or a line and its output and note. */
  static void print(CliSession s, TxSummary t) {
    if (s.json()) {
      s.out.println(t.toJson().encode());
      return;
    }
    JsonObject j = t.toJson();
    s.out.println(t.txId() + "  " + t.type() + "  " + t.status().wire() + " (" + t.processingState() + ")  owner "
        + t.owner() + (t.externalId() == null ? "" : "  externalId " + t.externalId()) + "  created " + t.created()
        + (t.completed() == null ? "" : "  completed " + t.completed()));
    if (j.getValue("output") != null) {
      s.out.println("  output: " + Json.encode(j.getValue("output")));
    }
    if (t.note() != null) {
      s.out.println("  note: " + t.note());
    }
    JsonObject paused = j.getJsonObject("paused");
    if (paused != null) {
      s.out.println("  paused since " + paused.getString("since") + " by " + paused.getString("by")
          + (paused.getString("reason") == null ? "" : ": " + paused.getString("reason")));
    }
  }

  /** Polls until the transaction ends or the deadline (Ticker.SYSTEM) passes. */
  private static TxSummary untilFinal(CliSession s, TxSummary started, long deadline) {
    TxSummary t = started;
    while (!t.status().isFinal() && Ticker.SYSTEM.nanos() - deadline < 0) {
      s.pause(20);
      t = s.tx().status(t.txId(), t.owner()).await();
    }
    return t;
  }
}
