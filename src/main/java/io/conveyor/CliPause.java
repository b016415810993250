package io.conveyor;

import io.conveyor.domain.Pauses;
import io.conveyor.redis.PauseStore;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** conveyor pause|resume TXID: one transaction (any owner's) stops at its next step boundary, or goes on. */
final class CliPause {
  private CliPause() {
  }

  private static Pauses pauses(CliSession s) {
    return new Pauses(new PauseStore(s.tx().context()), s.tx());
  }

  @Command(name = "pause", description = {"Pause a transaction and its children where they stand.",
      "A running step finishes; the next does not start until resume. Paused already: shown as it is."},
      footerHeading = "%nExample:%n", footer = "  conveyor pause tx-0f3a… --reason 'step 3 is wrong'")
  static final class Pause implements Callable<Integer> {
    private final CliSession s;
    @Parameters(paramLabel = "TXID")
    String txId;
    @Option(names = "--reason", paramLabel = "TEXT", description = "Why (shown with it; at most 500 characters).")
    String reason;
    @Option(names = "--no-tree", description = "Only this one: its children and branches go on.")
    boolean alone;

    Pause(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      Pauses.Ask ask = Pauses.pauseAsk(new JsonObject().put("reason", reason).put("tree", !alone));
      CliTx.print(s, s.admin().ownerOf(txId).compose(owner -> pauses(s).pause(txId, owner, "cli", ask)).await());
      return Cli.OK;
    }
  }

  @Command(name = "resume", description = {"Resume a paused transaction (and its children) where it stood.",
      "Timers that fell due while paused fire now, or with --timers skip run as if the pause took no time."},
      footerHeading = "%nExample:%n", footer = "  conveyor resume tx-0f3a… --timers skip")
  static final class Resume implements Callable<Integer> {
    private final CliSession s;
    @Parameters(paramLabel = "TXID")
    String txId;
    @Option(names = "--timers", paramLabel = "fire|skip", description = "fire (the default) or skip.")
    String timers = "fire";
    @Option(names = "--no-tree", description = "Only this one: its paused children and branches stay paused.")
    boolean alone;

    Resume(CliSession s) {
      this.s = s;
    }

    @Override
    public Integer call() {
      Pauses.Ask ask = Pauses.resumeAsk(new JsonObject().put("timers", timers).put("tree", !alone));
      CliTx.print(s, s.admin().ownerOf(txId).compose(owner -> pauses(s).resume(txId, owner, "cli", ask)).await());
      return Cli.OK;
    }
  }
}
