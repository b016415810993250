package io.conveyor;

import io.conveyor.redis.ControlStore;
import io.conveyor.time.Ticker;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** conveyor group pause|drain|resume|status GROUP [--wait]: a node group's state. */
@Command(name = "group", description = {"Pause, drain, resume or read a node group.",
    "A group no pipeline names and no live node serves is refused (exit 1)."},
    footerHeading = "%nExample:%n", footer = "  conveyor group drain master --wait")
final class CliGroup {
  private final CliSession s;

  CliGroup(CliSession s) {
    this.s = s;
  }

  @Command(name = "pause", description = "Its nodes take no new work; what runs goes on.")
  int pause(@Parameters(paramLabel = "GROUP") String group) {
    return show(s.tx().group(group, "pause", "cli").await());
  }

  @Command(name = "drain", description = "Its nodes take no new work; with --wait, wait (up to 5 min) until"
      + " nothing of it is in flight, exit 1 if it did not.")
  int drain(@Parameters(paramLabel = "GROUP") String group,
            @Option(names = "--wait", description = "Wait until it is drained, then print its state.") boolean await) {
    ControlStore.GroupState state = s.tx().group(group, "drain", "cli").await();
    if (!await) {
      return show(state);
    }
    // one line on stdout, where the wait ended; while it waits, how far it got on stderr
    long deadline = Ticker.SYSTEM.nanos() + Cli.WAIT_NANOS * 5;
    CliProgress progress = s.progress(1);
    while (state.inFlight() > 0 && state.state().equals("draining") && Ticker.SYSTEM.nanos() - deadline < 0) {
      long inFlight = state.inFlight();
      progress.note(() -> "group " + group + ": draining, " + inFlight + " still in flight");
      s.pause(200);
      state = s.tx().group(group, "read", "cli").await();
    }
    show(state);
    return state.inFlight() == 0 ? Cli.OK : Cli.REFUSED;
  }

  @Command(name = "resume", description = "Its nodes take work again.")
  int resume(@Parameters(paramLabel = "GROUP") String group) {
    return show(s.tx().group(group, "resume", "cli").await());
  }

  @Command(name = "status", description = "Its state, what is in flight and what is queued.")
  int status(@Parameters(paramLabel = "GROUP") String group) {
    return show(s.tx().group(group, "read", "cli").await());
  }

  private int show(ControlStore.GroupState g) {
    s.out.println(s.json() ? g.toJson().encode() : g.group() + "  " + g.state() + "  in flight " + g.inFlight()
        + "  queued " + g.queued() + (g.state().equals("draining") && g.inFlight() == 0 ? "  drained" : ""));
    return Cli.OK;
  }
}
