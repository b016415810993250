package io.conveyor;

import static io.conveyor.CliArgs.arg;
import static io.conveyor.CliArgs.option;
import io.conveyor.api.ScheduleAdmin;
import io.conveyor.domain.Transactions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.PrintStream;
import java.util.List;

/** conveyor schedule list | schedule show|pause|resume|trigger ID, through the admin API's ScheduleAdmin. */
record CliSchedule(PrintStream out, boolean json) {
  /** schedule list, or schedule ACTION ID. */
  int run(Transactions tx, List<String> args) {
    ScheduleAdmin admin = new ScheduleAdmin(tx.schedules(), tx, tx.clock());
    String action = arg(args, 1, "list, show, pause, resume or trigger");
    if (action.equals("list")) {
      JsonArray all = admin.list().await().getJsonArray("schedules");
      for (Object o : all) {
        JsonObject s = (JsonObject) o;
        out.println(json ? s.encode() : s.getString("id") + "  " + s.getJsonObject("definition").getString("pipeline")
            + "  " + (s.getBoolean("paused") ? "paused" : "next " + s.getJsonArray("next", new JsonArray()).stream()
            .findFirst().orElse("-")));
      }
      if (!json && all.isEmpty()) {
        out.println("no schedules");
      }
      return Cli.OK;
    }
    String id = arg(args, 2, "ID");
    JsonObject result = switch (action) {
      case "show" -> admin.get(id).await();
      case "pause" -> admin.setPaused(id, true, "cli").await();
      case "resume" -> admin.setPaused(id, false, "cli").await();
      case "trigger" -> admin.trigger(id).await();
      default -> throw new IllegalArgumentException("schedule: expected list, show, pause, resume or trigger, got "
          + action);
    };
    out.println(json ? result.encode() : result.getString("id") + "  " + (result.getBoolean("paused") ? "paused"
        : "active") + (result.getString("triggered") == null ? "" : "  triggered " + result.getString("triggered")));
    return Cli.OK;
  }
}
