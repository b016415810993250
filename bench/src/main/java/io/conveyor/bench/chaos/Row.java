package io.conveyor.bench.chaos;

import java.util.List;
import java.util.Locale;

/** One run's result, as a line while the suite runs and as a row of the final markdown table. */
record Row(String scenario, int run, int started, int lost, int failed, int internalError, long duplicates,
           long effectsDuplicated, long maybeRan, long inFlightAtFault, long healthyReaped, long healthyRequeued, double recoverSeconds, double recoverBound, String notes) {

  static final String HEADER = "| scenario | run | started | lost | failed | internal-error | duplicates "
      + "| effects duplicated | maybe-ran | in-flight at fault | healthy nodes reaped | healthy requeued | recover s | notes |\n"
      + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

  static Row failedRun(String scenario, int run, String why) {
    return new Row(scenario, run, 0, -1, -1, -1, -1, -1, -1, -1, -1, -1, Double.NaN, 0, "run failed: " + why);
  }

  /**
   * A scenario run more than once: its worst run (most lost, then most failed or internal-error, then most
   * healthy nodes reaped, then most duplicates beyond the victim's in-flight count, then most healthy work
   * requeued, then slowest to recover), as a line of a second table.
   */
  static List<String> worstRuns(List<Row> rows) {
    java.util.Map<String, List<Row>> byScenario = new java.util.LinkedHashMap<>();
    rows.forEach(r -> byScenario.computeIfAbsent(r.scenario, k -> new java.util.ArrayList<>()).add(r));
    java.util.Comparator<Row> badness = java.util.Comparator.<Row>comparingInt(r -> r.lost)
        .thenComparingInt(r -> r.failed + r.internalError)
        .thenComparingLong(r -> r.healthyReaped)
        .thenComparingLong(r -> r.duplicates - r.inFlightAtFault)
        .thenComparingLong(r -> r.healthyRequeued)
        .thenComparingDouble(r -> Double.isNaN(r.recoverSeconds) ? Double.MAX_VALUE : r.recoverSeconds);
    List<String> out = new java.util.ArrayList<>();
    byScenario.forEach((scenario, runs) -> {
      if (runs.size() < 2) {
        return;
      }
      if (out.isEmpty()) {
        out.add("");
        out.add("| scenario | runs | worst run | lost | failed | internal-error | duplicates | victim's in flight "
            + "| healthy nodes reaped | healthy requeued | recover s |\n|---|---|---|---|---|---|---|---|---|---|---|");
      }
      Row w = runs.stream().max(badness).orElseThrow();
      out.add("| " + String.join(" | ", List.of(scenario, Integer.toString(runs.size()), Integer.toString(w.run),
          Integer.toString(w.lost), Integer.toString(w.failed), Integer.toString(w.internalError),
          Long.toString(w.duplicates), Long.toString(w.inFlightAtFault), Long.toString(w.healthyReaped),
          Long.toString(w.healthyRequeued), w.recover())) + " |");
    });
    return out;
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
        Long.toString(effectsDuplicated), Long.toString(maybeRan), Long.toString(inFlightAtFault), Long.toString(healthyReaped), Long.toString(healthyRequeued), recover(), notes.replace("|", "/"))) + " |";
  }

  String line() {
    return String.format(Locale.ROOT, "chaos: %s run %d: started %d, lost %d, failed %d, internal-error %d, "
        + "duplicates %d, effects duplicated %d, maybe-ran %d, in-flight at fault %d, healthy nodes reaped %d, healthy "
        + "requeued %d, recover %s s; %s", scenario, run, started, lost, failed, internalError, duplicates,
        effectsDuplicated, maybeRan, inFlightAtFault, healthyReaped, healthyRequeued, recover(), notes);
  }
}
