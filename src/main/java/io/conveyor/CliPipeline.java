package io.conveyor;

import io.conveyor.domain.Migrations;
import io.conveyor.model.TxException;
import io.conveyor.redis.MigrateStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.Rollouts;
import io.conveyor.redis.StoreContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * conveyor pipeline migrate|rollout NAME …: move a pipeline's live transactions to another version (a dry run unless
 * --apply), and show, promote or roll back its rollout (README: Rolling out a version).
 */
@Command(name = "pipeline", description = {"Move a pipeline's live transactions to another of its versions; show, "
    + "promote or roll back its rollout.",
    "A rollout is a canary version uploaded with \"rollout\": {\"share\": n} beside the stable one."},
    footerHeading = "%nExamples:%n", footer = {"  conveyor pipeline migrate order --to 9f2c… --step-map 3=3",
    "  conveyor pipeline rollout order rollback"})
final class CliPipeline {
  private final CliSession s;

  CliPipeline(CliSession s) {
    this.s = s;
  }

  @Command(name = "migrate", description = {"Move NAME's live transactions to another version: each goes on at its "
      + "step's mapped step with its input; running ones move at their next step boundary.",
      "A dry run (counts only) unless --apply. With --undo, those still where a migration to --to put them go back."},
      footerHeading = "%nExamples:%n", footer = {"  conveyor pipeline migrate order --to 9f2c… --step-map 3=3",
      "  conveyor pipeline migrate order --to 9f2c… --step-map 3=3 --apply"})
  int migrate(@Parameters(paramLabel = "NAME") String name,
              @Option(names = "--to", paramLabel = "V", description = "The version to move to (default: the current "
                  + "one).") String to,
              @Option(names = "--from", paramLabel = "V", description = "A version to move from (repeat for more; "
                  + "default: every version but --to).") List<String> from,
              @Option(names = "--step-map", paramLabel = "OLD=NEW", description = "An old step's new step, steps from "
                  + "1 (repeat; default: by position when both versions have as many steps).") List<String> stepMap,
              @Option(names = "--apply", description = "Move them (without it: a dry run).") boolean apply,
              @Option(names = "--undo", description = "Move back those still where a migration put them.")
              boolean undo) {
    JsonObject body = new JsonObject().put("dryRun", !apply);
    if (to != null) {
      body.put("to", to);
    }
    if (from != null) {
      body.put("from", new JsonArray(List.copyOf(from)));
    }
    if (stepMap != null) {
      body.put("stepMap", steps(stepMap));
    }
    if (undo) {
      body.put("undo", true);
    }
    StoreContext r = s.tx().context();
    JsonObject done = new Migrations(new MigrateStore(r), new PipelineStore(r), r.keys().partitions(), r.ticker())
        .run(name, body, "cli").await();
    s.out.println(s.json() ? done.encode() : migrateLine(done));
    return Cli.OK;
  }

  private static JsonObject steps(List<String> pairs) {
    JsonObject map = new JsonObject();
    for (String p : pairs) {
      String[] kv = p.split("=", -1);
      if (kv.length != 2 || !kv[1].matches("[1-9][0-9]{0,3}")) {
        throw TxException.invalid("--step-map", "expected OLD=NEW (steps from 1), got " + p);
      }
      map.put(kv[0], Integer.parseInt(kv[1]));
    }
    return map;
  }

  private static String migrateLine(JsonObject d) {
    String head = d.getString("pipeline") + ": " + (d.getBoolean("undo") ? "undo to " + d.getString("to")
        : d.getJsonArray("from").size() + " version(s) to " + d.getString("to"))
        + (d.getBoolean("dryRun") ? " (dry run: nothing written)" : "");
    String counts = d.getBoolean("undo") ? "  undone " + d.getLong("undone")
        : "  " + (d.getBoolean("dryRun") ? "would move " : "moved ") + d.getLong("moved") + ", at next step boundary "
        + d.getLong("atBoundary") + ", already there " + d.getLong("already");
    JsonObject cannot = d.getJsonObject("cannot");
    StringBuilder why = new StringBuilder();
    cannot.fieldNames().stream().sorted().forEach(k -> why.append(why.isEmpty() ? "" : ", ").append(k).append(' ')
        .append(cannot.getLong(k)));
    return head + "\n" + counts + (why.isEmpty() ? "" : "\n  cannot: " + why) + "\n  took " + d.getLong("tookMs")
        + " ms in " + d.getLong("batches") + " batches";
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
    s.out.println(s.json() ? state.encode() : rolloutLine(state));
    return Cli.OK;
  }

  private static String rolloutLine(JsonObject r) {
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
