package io.conveyor;

import io.conveyor.api.ScheduleAdmin;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** conveyor schedule list | schedule show|pause|resume|trigger ID, through the admin API's ScheduleAdmin. */
@Command(name = "schedule", description = "List, show, pause, resume or trigger schedules.", footerHeading = "%nExamples:%n", footer = {"  conveyor schedule list",
        "  conveyor schedule trigger nightly-report"})
final class CliSchedule {
  private final CliSession s;

  CliSchedule(CliSession s) {
    this.s = s;
  }

  private ScheduleAdmin admin() {
    return new ScheduleAdmin(s.tx().schedules(), s.tx(), s.tx().clock());
  }

  @Command(name = "list", description = "Each schedule: its pipeline and its next fire time (or paused).")
  int list() {
    JsonArray all = admin().list().await().getJsonArray("schedules");
    for (Object o : all) {
      JsonObject j = (JsonObject) o;
      s.out.println(s.json() ? j.encode() : j.getString("id") + "  " + j.getJsonObject("definition")
          .getString("pipeline") + "  " + (j.getBoolean("paused") ? "paused" : "next " + firstNext(j)));
    }
    if (!s.json() && all.isEmpty()) {
      s.out.println("no schedules");
    }
    return Cli.OK;
  }

  @Command(name = "show", description = "One schedule whole: its definition, state, runs and next fire times.")
  int show(@Parameters(paramLabel = "ID") String id) {
    JsonObject j = admin().get(id).await();
    if (s.json()) {
      s.out.println(j.encode());
      return Cli.OK;
    }
    s.out.println(state(j));
    JsonObject d = j.getJsonObject("definition");
    for (Map.Entry<String, Object> e : d) {
      if (!List.of("id", "paused").contains(e.getKey())) {
        s.out.println(String.format("  %-13s %s", e.getKey(), e.getValue() instanceof String v ? v
            : Json.encode(e.getValue())));
      }
    }
    s.out.println(String.format("  %-13s %s", "next", j.getJsonArray("nextFires", new JsonArray()).isEmpty() ? "-"
        : String.join(", ", j.getJsonArray("nextFires").stream().map(Object::toString).toList())));
    s.out.println(String.format("  %-13s fires %d, misses %d, skipped overlaps %d", "runs", j.getLong("fires", 0L),
        j.getLong("misses", 0L), j.getLong("skipped", 0L)));
    JsonObject last = j.getJsonObject("lastRun");
    if (last != null) {
      s.out.println(String.format("  %-13s %s fired %s%s", "last run", last.getString("txId"),
          last.getString("fireTime"), last.getString("status") == null ? "" : ", " + last.getString("status")));
    }
    return Cli.OK;
  }

  @Command(name = "pause", description = "It fires no more until resumed.")
  int pause(@Parameters(paramLabel = "ID") String id) {
    return print(admin().setPaused(id, true, "cli").await());
  }

  @Command(name = "resume", description = "It fires again, from its next fire time.")
  int resume(@Parameters(paramLabel = "ID") String id) {
    return print(admin().setPaused(id, false, "cli").await());
  }

  @Command(name = "trigger", description = "One run now, outside its fire times.")
  int trigger(@Parameters(paramLabel = "ID") String id) {
    return print(admin().trigger(id).await());
  }

  private int print(JsonObject j) {
    s.out.println(s.json() ? j.encode() : state(j) + (j.getString("triggered") == null ? ""
        : "  triggered " + j.getString("triggered")));
    return Cli.OK;
  }

  /** The one-line state: id, active or paused (by whom, why), and the next fire time. */
  private static String state(JsonObject j) {
    return j.getString("id") + "  " + (j.getBoolean("paused") ? "paused" + (j.getString("pausedBy") == null ? ""
        : " by " + j.getString("pausedBy")) + (j.getString("pauseReason") == null ? ""
        : " (" + j.getString("pauseReason") + ")") : "active  next " + firstNext(j));
  }

  /** The first of the next fire times the admin API answers (nextFires), or "-". */
  private static String firstNext(JsonObject j) {
    JsonArray next = j.getJsonArray("nextFires", new JsonArray());
    return next.isEmpty() ? "-" : next.getString(0);
  }
}
