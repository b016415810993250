package io.conveyor;

import io.conveyor.api.AdminApi;
import io.conveyor.config.Config;
import io.conveyor.domain.Search;
import io.conveyor.domain.Transactions;
import io.conveyor.redis.ReadStore;
import io.conveyor.time.Ticker;
import io.vertx.core.Vertx;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Function;

/**
 * One run of the command line, shared by its commands: where it prints and how (--json), the config (read from
 * --config on first use), and the services it opens on first use, so help, completion and new-key need neither
 * a config nor Redis. Closed once the command has run.
 */
final class CliSession implements AutoCloseable {
  final PrintStream out;
  final PrintStream err;
  /** How often a long walk (list --all, tail --follow, drain --wait) may say on stderr how far it got. */
  final Duration progressEvery;
  private final Function<Path, Config> configFor;
  private boolean json;
  private Path configFile;
  private Vertx vertx;
  private Transactions tx;

  private final Ticker searchTicker;
  private final int searchPerCall;

  CliSession(PrintStream out, PrintStream err, Function<Path, Config> configFor, Duration progressEvery) {
    this(out, err, configFor, progressEvery, Ticker.SYSTEM, Search.PER_CALL);
  }

  /**
   * searchTicker: what a search's time budget (http.searchBudget) is read on; searchPerCall: the entries a search
   * looks at per partition and script call (a test makes them cut a walk short).
   */
  CliSession(PrintStream out, PrintStream err, Function<Path, Config> configFor, Duration progressEvery,
             Ticker searchTicker, int searchPerCall) {
    this.out = out;
    this.err = err;
    this.configFor = configFor;
    this.progressEvery = progressEvery;
    this.searchTicker = searchTicker;
    this.searchPerCall = searchPerCall;
  }

  boolean json() {
    return json;
  }

  void json(boolean on) {
    json = on;
  }

  void configFile(Path file) {
    configFile = file;
  }

  Vertx vertx() {
    if (vertx == null) {
      vertx = Vertx.vertx();
    }
    return vertx;
  }

  /** The Transactions service on the config's Redis and archive, opened (and its layout checked) on first use. */
  Transactions tx() {
    if (tx == null) {
      tx = ClientRoot.transactions(vertx(), configFor.apply(configFile));
    }
    return tx;
  }

  /** The config this session runs on. */
  Config config() {
    return configFor.apply(configFile);
  }

  /** The transaction search on the config's Redis and archive, within the config's http.searchBudget a page. */
  Search search() {
    return new Search(new ReadStore(tx().context()), tx().context().keys(), tx().archive().await(), searchPerCall,
        searchTicker, searchBudget());
  }

  Duration searchBudget() {
    return config().http().searchBudget();
  }

  AdminApi admin() {
    return AdminApi.of(tx(), tx().archive().await());
  }

  /** A progress line on stderr at most every interval times `factor`, the first after one such interval. */
  CliProgress progress(int factor) {
    return new CliProgress(err, Ticker.SYSTEM, progressEvery.multipliedBy(factor));
  }

  /** Waits `millis` on the session's Vert.x (off its event loop: the commands run on the caller's thread). */
  void pause(long millis) {
    io.vertx.core.Promise<Void> tick = io.vertx.core.Promise.promise();
    vertx().setTimer(Math.max(1, millis), t -> tick.complete());
    tick.future().await();
  }

  @Override
  public void close() {
    if (tx != null) {
      // its link writes the stats counts of the starts it made (StatsTally) before it closes
      tx.close().toCompletionStage().toCompletableFuture().exceptionally(e -> null).join();
      tx.archive().onSuccess(a -> {
        if (a != null) {
          a.close();
        }
      });
    }
    if (vertx != null) {
      vertx.close().await();
    }
  }
}
