package io.conveyor;

import io.conveyor.domain.Migrations;
import io.conveyor.model.TxException;
import io.conveyor.redis.MigrateStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.StoreContext;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** conveyor pipeline migrate NAME …: move a pipeline's live transactions to another version (a dry run unless --apply). */
@Command(name = "pipeline", description = "Move a pipeline's live transactions to another of its versions.")
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
    s.out.println(s.json() ? done.encode() : line(done));
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

  private static String line(JsonObject d) {
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
}
