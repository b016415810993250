package io.conveyor;

import static io.conveyor.CliArgs.arg;
import static io.conveyor.CliArgs.option;
import io.conveyor.domain.Transactions;
import io.conveyor.redis.ControlStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.util.List;

/** conveyor group pause|drain|resume|status GROUP [--wait]. */
record CliGroup(PrintStream out, boolean json) {
  /** group ACTION GROUP; drain --wait prints again once drained (exit 1 if it was not within five minutes). */
  int run(Vertx vertx, Transactions tx, List<String> args) {
    String action = arg(args, 1, "pause, drain, resume or status");
    if (!List.of("pause", "drain", "resume", "status").contains(action)) {
      throw new IllegalArgumentException("group: expected pause, drain, resume or status, got " + action);
    }
    String group = arg(args, 2, "GROUP");
    var s = tx.group(group, action.equals("status") ? "read" : action, "cli").await();
    printGroup(s);
    if (action.equals("drain") && args.contains("--wait")) {
      long deadline = Ticker.SYSTEM.nanos() + Cli.WAIT_NANOS * 5;
      while (s.inFlight() > 0 && s.state().equals("draining") && Ticker.SYSTEM.nanos() - deadline < 0) {
        Promise<Void> tick = Promise.promise();
        vertx.setTimer(200, t -> tick.complete());
        tick.future().await();
        s = tx.group(group, "read", "cli").await();
      }
      printGroup(s);
      return s.inFlight() == 0 ? Cli.OK : Cli.REFUSED;
    }
    return Cli.OK;
  }

  private void printGroup(ControlStore.GroupState s) {
    out.println(json ? s.toJson().encode() : s.group() + "  " + s.state() + "  in flight " + s.inFlight()
        + "  queued " + s.queued());
  }
}
