package io.conveyor.bench.chaos;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What the chaos suite was asked to run: the scenarios (all, or one by name), how many runs of each (pause
 * scenarios: pauseRuns, 5 by default, since a pause's outcome varies from run to run), the steady start rate, and
 * how long the load lasts (at least until the fault is over and a margin after it). notIdempotent declares the
 * pipeline's steps "idempotent": false (at most once: a step a lost node may have run ends maybe-ran). tls runs every
 * node on HTTPS and bus mutual TLS with a CA of the run's (ChaosTls). nodes is how many node processes the
 * redis-cluster scenarios run (1 to 3, 3 by default; the other scenarios always run three, as their faults hit one),
 * and warmup how long their load runs before the fault (30 s by default: a young node's C2 compiler takes most of a
 * core for its first minute at 500/s here).
 */
record ChaosOptions(List<Scenario> scenarios, int runs, int pauseRuns, double rate, int durationSeconds,
                    int stepMillis, boolean keep, boolean notIdempotent, boolean tls, int nodes,
                    int warmupSeconds) {

  static final String USAGE = "usage: bench/chaos [--scenario NAME|all] [--runs N] [--pause-runs N] [--rate R]"
      + " [--duration S] [--step-ms MS] [--nodes N] [--warmup S] [--keep] [--not-idempotent] [--tls]   (scenarios: " + String.join(", ", Scenario.names()) + ")";

  /** How many runs of the scenario: pauseRuns for a SIGSTOP scenario, else runs. */
  int runsOf(Scenario s) {
    return s.pause() ? pauseRuns : runs;
  }

  /** Reads the command line; throws IllegalArgumentException with a one-line message naming the option. */
  static ChaosOptions parse(String[] args) {
    List<Scenario> scenarios = Arrays.asList(Scenario.values());
    int runs = 1;
    int pauseRuns = 5;
    double rate = 100;
    int duration = 40;
    int stepMillis = 200;
    boolean keep = false;
    boolean notIdempotent = false;
    boolean tls = false;
    int nodes = Rig.NODES;
    int warmup = 30;
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      if (name.equals("--keep")) {
        keep = true;
        continue;
      }
      if (name.equals("--not-idempotent")) {
        notIdempotent = true;
        continue;
      }
      if (name.equals("--tls")) {
        tls = true;
        continue;
      }
      if (!name.matches("--(scenario|runs|pause-runs|rate|duration|step-ms|nodes|warmup)")) {
        throw new IllegalArgumentException("unknown option " + name + " (" + USAGE + ")");
      }
      if (i + 1 == args.length) {
        throw new IllegalArgumentException(name + " needs a value (" + USAGE + ")");
      }
      String v = args[++i];
      switch (name) {
        case "--scenario" -> scenarios = v.equals("all") ? Arrays.asList(Scenario.values()) : scenarios(v);
        case "--runs" -> runs = whole(name, v, 1, 1000);
        case "--pause-runs" -> pauseRuns = whole(name, v, 1, 1000);
        case "--rate" -> rate = whole(name, v, 1, 5000);
        case "--duration" -> duration = whole(name, v, 10, 3600);
        case "--nodes" -> nodes = whole(name, v, 1, Rig.NODES);
        case "--warmup" -> warmup = whole(name, v, 10, 3600);
        default -> stepMillis = whole(name, v, 0, 10_000);
      }
    }
    return new ChaosOptions(scenarios, runs, pauseRuns, rate, duration, stepMillis, keep, notIdempotent, tls, nodes, warmup);
  }

  /** One name or several, comma-separated. */
  private static List<Scenario> scenarios(String v) {
    List<Scenario> out = new ArrayList<>();
    for (String s : v.split(",")) {
      out.add(Scenario.byName(s.trim()).orElseThrow(() -> new IllegalArgumentException("--scenario: no scenario "
          + s + " (" + USAGE + ")")));
    }
    return out;
  }

  private static int whole(String name, String v, int min, int max) {
    try {
      int n = Integer.parseInt(v);
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new IllegalArgumentException(name + ": expected a whole number from " + min + " to " + max + ", got " + v);
  }
}
