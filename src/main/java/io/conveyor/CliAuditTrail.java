package io.conveyor;

import io.conveyor.api.AuditLog;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.AuditEntry;
import io.conveyor.model.TxException;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * Runs the command and records it in the audit log (README, Audit log), as the HTTP gate records an admin route:
 * every command is an act unless listed here as a read (recorded only with audit.reads) or as local (it touches
 * nothing shared: never recorded), so a new command is audited without anyone remembering to. Who is the OS user
 * and host (cli:user@host; no key), the action the command's path ("conveyor group pause"), the target its
 * arguments that name things (not a *_JSON payload), the status its exit code. The entry goes to Redis (eventsL
 * and auditX) with the node's script, where it waits for the archive leader: the command line needs no archive.
 */
final class CliAuditTrail implements CommandLine.IExecutionStrategy {
  /** The commands that change nothing (recorded only with audit.reads). */
  static final Set<String> READS = Set.of("conveyor status", "conveyor list", "conveyor tail",
      "conveyor group status", "conveyor schedule list", "conveyor schedule show", "conveyor owner list",
      "conveyor owner show", "conveyor archive-quarantine list", "conveyor audit");
  /** The commands that touch neither Redis nor the archive (never recorded). */
  static final Set<String> LOCAL = Set.of("conveyor", "conveyor new-key", "conveyor completion bash",
      "conveyor completion zsh", "conveyor help");
  private final CliSession s;
  private final CliErrors errors;
  private final Clock clock;

  CliAuditTrail(CliSession s, CliErrors errors, Clock clock) {
    this.s = s;
    this.errors = errors;
    this.clock = clock;
  }

  @Override
  public int execute(ParseResult parsed) {
    ParseResult leaf = parsed;
    while (leaf.subcommand() != null) {
      leaf = leaf.subcommand();
    }
    long at = clock.millis();
    int code;
    String error = null;
    try {
      code = new CommandLine.RunLast().execute(parsed);
    } catch (CommandLine.ExecutionException e) {
      Exception cause = e.getCause() instanceof Exception x ? x : e;
      code = errors.handleExecutionException(cause, e.getCommandLine(), parsed);
      error = cause instanceof TxException t ? t.kind().name().toLowerCase().replace('_', '-') + ": " + t.getMessage()
          : cause.getMessage();
    }
    String action = leaf.commandSpec().qualifiedName(" ");
    if (leaf.isUsageHelpRequested() || leaf.isVersionHelpRequested() || LOCAL.contains(action)
        || isRead(action, leaf) && !auditReads()) {
      return code;
    }
    record(new AuditEntry(0, at, who(), owner(leaf), action, target(leaf), outcome(code), code,
        code == Cli.OK ? null : AuditEntry.clean(error == null ? "exit " + code : error), host(), "cli", "cli",
        params(leaf)));
    return code;
  }

  /** audit.reads of the config (false when the config cannot be read: the command said why). */
  private boolean auditReads() {
    try {
      return s.config().audit().reads();
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** A read: listed, or a rollout that only shows. */
  static boolean isRead(String action, ParseResult leaf) {
    return READS.contains(action) || action.equals("conveyor pipeline rollout")
        && leaf.matchedPositionals().stream().anyMatch(p -> "show".equals(String.valueOf((Object) p.getValue())));
  }

  /** ok for exit 0; refused for 1 (not found, not allowed now) and 2 (bad usage); failed for 3 (out of reach). */
  static String outcome(int code) {
    return code == Cli.OK ? "ok" : code == Cli.UNAVAILABLE ? "failed" : "refused";
  }

  private void record(AuditEntry e) {
    try {
      new AuditLog(s.tx().context(), new NodeMetrics(false), "cli", s.config().audit().maxWaiting()).record(e)
          .await();
    } catch (RuntimeException x) {
      s.err.println("conveyor: the audit entry of this command was not written to Redis (" + x.getMessage() + "): "
          + e.toJson().encode());
    }
  }

  /** The positional arguments that name what was acted on, joined by '/' (payloads, *_JSON, left out). */
  private static String target(ParseResult leaf) {
    List<String> named = new ArrayList<>();
    for (ArgSpec p : leaf.matchedPositionals()) {
      if (!p.paramLabel().endsWith("_JSON")) {
        named.add(String.valueOf((Object) p.getValue()));
      }
    }
    return AuditEntry.clean(String.join("/", named));
  }

  /** {options: {name: value}}: the options given (a *_JSON value as its size), never a payload. */
  private static JsonObject params(ParseResult leaf) {
    JsonObject options = new JsonObject();
    for (OptionSpec o : leaf.matchedOptions()) {
      Object v = o.getValue();
      options.put(o.longestName(), o.paramLabel().endsWith("_JSON") ? "(" + String.valueOf(v).length() + " chars)"
          : AuditEntry.clean(String.valueOf(v)));
    }
    return new JsonObject().put("options", options);
  }

  /** The owner it acted for when the command takes --owner (start's default is cli), else "". */
  private static String owner(ParseResult leaf) {
    OptionSpec o = leaf.commandSpec().findOption("--owner");
    return o == null || o.getValue() == null ? "" : AuditEntry.clean(String.valueOf((Object) o.getValue()));
  }

  /** cli:user@host: the OS user running the command line and the host's name. */
  static String who() {
    return AuditEntry.clean("cli:" + System.getProperty("user.name", "?") + "@" + host());
  }

  private static String host() {
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isBlank()) {
      return AuditEntry.clean(env);
    }
    try {
      return AuditEntry.clean(InetAddress.getLocalHost().getHostName());
    } catch (java.io.IOException e) {
      return "unknown-host";
    }
  }
}
