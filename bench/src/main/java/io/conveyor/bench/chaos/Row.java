package io.conveyor.bench.chaos;

import java.util.List;
import java.util.Locale;

/** One run's result, as a line while the suite runs and as a row of the final markdown table. */
record Row(String scenario, int run, int started, int lost, int failed, int internalError, long duplicates,
           long inFlightAtFault, long healthyRequeued, double recoverSeconds, double recoverBound, String notes) {

  static final String HEADER = "| scenario | run | started | lost | failed | internal-error | duplicates "
      + "| in-flight at fault | healthy requeued | recover s | notes |\n|---|---|---|---|---|---|---|---|---|---|---|";

  static Row failedRun(String scenario, int run, String why) {
    return new Row(scenario, run, 0, -1, -1, -1, -1, -1, -1, Double.NaN, 0, "run failed: " + why);
  }

  String recover() {
    if (Double.isNaN(recoverSeconds)) {
      return recoverBound > 0 ? String.format(Locale.ROOT, ">%.0f", recoverBound) : "-";
    }
    return String.format(Locale.ROOT, "%.1f", recoverSeconds);
  }

  String markdown() {
    return "| " + String.join(" | ", List.of(scenario, Integer.toString(run), Integer.toString(started),
        Integer.toString(lost), Integer.toString(failed), Integer.toString(internalError), Long.toString(duplicates),
        Long.toString(inFlightAtFault), Long.toString(healthyRequeued), recover(), notes.replace("|", "/"))) + " |";
  }

  String line() {
    return String.format(Locale.ROOT, "chaos: %s run %d: started %d, lost %d, failed %d, internal-error %d, "
        + "duplicates %d, in-flight at fault %d, healthy requeued %d, recover %s s; %s", scenario, run, started, lost,
        failed, internalError, duplicates, inFlightAtFault, healthyRequeued, recover(), notes);
  }
}
