package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.domain.Events;
import io.conveyor.pipeline.CompiledPipeline;
import io.conveyor.pipeline.PipelineParser;
import io.conveyor.pipeline.StepRegistry;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** conveyor event send NAME KEY [PAYLOAD_JSON]: a business event for an owner, as POST /api/v1/events sends it. */
@Command(name = "event", description = {"Send a business event to the flow/await steps waiting for it.",
    "It wakes the owner's steps of that name and key, or is kept for events.retention, or starts a transaction"
        + " type that declares startOn for it (as the pipeline files of pipelines.dir say)."},
    footerHeading = "%nExample:%n", footer = "  conveyor event send payment.settled o-17 '{\"amount\":1200}' --owner acme"
        + " --id psp-88121")
final class CliEvent {
  private final CliSession s;

  CliEvent(CliSession s) {
    this.s = s;
  }

  @Command(name = "send", description = "Send one event; prints its id and what it did.")
  int send(@Parameters(index = "0", paramLabel = "NAME") String name,
           @Parameters(index = "1", paramLabel = "KEY", description = "The business key, e.g. an order id.") String key,
           @Parameters(index = "2", arity = "0..1", paramLabel = "PAYLOAD_JSON", description = "Any JSON (default {}).")
           String payload,
           @Option(names = "--owner", paramLabel = "NAME", description = "The owner (default cli).") String owner,
           @Option(names = "--id", paramLabel = "ID", description = "Its id: the same id again records nothing.")
           String id,
           @Option(names = "--deliver", paramLabel = "one|all", description = "Wake every waiter (all, the default)"
               + " or the first (one).") String deliver) {
    Config config = s.config();
    JsonObject body = new JsonObject().put("name", name).put("key", key).put("id", id).put("deliver", deliver)
        .put("payload", payload == null ? new JsonObject() : Json.decodeValue(payload));
    Events.Sent sent = Events.on(s.tx(), startOn(config)::get, config)
        .send(owner == null ? "cli" : owner, body).await();
    if (s.json()) {
      s.out.println(sent.toJson().encode());
    } else {
      s.out.println(sent.id() + "  " + sent.outcome() + (sent.duplicate() ? " (sent before)" : "") + "  woke "
          + sent.woken().size() + (sent.txId() == null ? "" : "  started " + sent.txId()));
    }
    return Cli.OK;
  }

  /** Event name → transaction type, from the startOn of the pipeline files (none when there is no such dir). */
  private static Map<String, String> startOn(Config config) {
    Map<String, String> out = new HashMap<>();
    Path dir = Path.of(config.pipelines().dir());
    if (Files.isDirectory(dir)) {
      for (CompiledPipeline p : new PipelineParser(StepRegistry.withBuiltIns()).loadDir(dir)) {
        if (p.pipeline().startOn() != null && p.pipeline().transactionType()) {
          out.put(p.pipeline().startOn(), p.pipeline().name());
        }
      }
    }
    return out;
  }
}
