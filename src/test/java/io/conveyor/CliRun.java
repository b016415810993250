package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.time.Ticker;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** What one run of the command line (in this JVM, on a node's config) printed and answered. */
record CliRun(int code, String out, String err) {
  static CliRun of(Config config, String... args) {
    return of(config, Cli.PROGRESS_EVERY, args);
  }

  /** progressEvery: how often long walks say how far they got (on stderr). */
  static CliRun of(Config config, Duration progressEvery, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = Cli.run(new ArrayList<>(List.of(args)), config, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), progressEvery);
    return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** A run whose searches read their time budget on ticker and look at perCall entries a call. */
  static CliRun of(Config config, Ticker ticker, int perCall, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = Cli.run(new CliSession(new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), file -> config, Cli.PROGRESS_EVERY, ticker, perCall), args);
    return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  JsonObject json() {
    return new JsonObject(out.strip());
  }

  List<JsonObject> lines() {
    return out.lines().filter(l -> !l.isBlank()).map(JsonObject::new).toList();
  }
}
