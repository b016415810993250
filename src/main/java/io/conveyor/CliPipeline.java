package io.conveyor;

import io.conveyor.redis.Rollouts;
import io.vertx.core.json.JsonObject;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** conveyor pipeline rollout NAME promote|rollback|show: a pipeline's rollout (README: Rolling out a version). */
@Command(name = "pipeline", description = {"Show, promote or roll back a pipeline's rollout.",
    "A rollout is a canary version uploaded with \"rollout\": {\"share\": n} beside the stable one."},
    footerHeading = "%nExample:%n", footer = "  conveyor pipeline rollout order rollback")
final class CliPipeline {
  private final CliSession s;

  CliPipeline(CliSession s) {
    this.s = s;
  }

  /** What rollout does: show it, or end it one way or the other. */
  enum Action { promote, rollback, show }

  @Command(name = "rollout", description = {"show: its state (canary, promoted, rolledback or none), versions and"
      + " share; promote: the canary takes every new start; rollback: the stable version takes every new start"
      + " again. Each transaction keeps the version it started on.",
      "Promoting or rolling back with no rollout under way is refused (exit 1)."})
  int rollout(@Parameters(index = "0", paramLabel = "NAME") String name,
              @Parameters(index = "1", paramLabel = "ACTION", description = "promote, rollback or show") Action action) {
    Rollouts rollouts = new Rollouts(s.tx().context());
    JsonObject state = (action == Action.show ? rollouts.state(name) : rollouts.act(name, action.name())).await();
    s.out.println(s.json() ? state.encode() : line(state));
    return Cli.OK;
  }

  private static String line(JsonObject r) {
    StringBuilder b = new StringBuilder(r.getString("name")).append("  ").append(r.getString("state"))
        .append("  starts run ").append(r.getString("version"));
    if (r.containsKey("stable")) {
      b.append(" (").append(r.getInteger("share")).append(" %), stable ").append(r.getString("stable"))
          .append(" (").append(100 - r.getInteger("share")).append(" %)");
    } else if (r.containsKey("canary")) {
      b.append("  canary was ").append(r.getString("canary"));
    }
    return r.containsKey("at") ? b.append("  since ").append(r.getString("at")).toString() : b.toString();
  }
}
