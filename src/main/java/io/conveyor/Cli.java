package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigLoader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The operator's command line, in the jar (picocli): it works on the Redis (and archive) of the config, through
 * the same scripts and stores the node uses, so it needs no node's API key. Each command prints readable lines,
 * or with --json one JSON document per line. Exit codes: 0 done, 1 refused (not found, not allowed now), 2 bad
 * usage (an unknown command or option, a malformed value), 3 Redis or the archive unreachable.
 */
@Command(name = "conveyor", sortOptions = false, usageHelpAutoWidth = true, versionProvider = Cli.Version.class,
    description = {"The operator's command line: it works on the Redis and archive of the config (conf/config.json"
        + " or --config FILE, and CONVEYOR_* variables) through the scripts a node uses, so it needs no API key. It"
        + " prints readable lines, or with --json one JSON document per line.",
        "With no command (or only --config FILE), java -jar conveyor.jar starts a node."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:done", "1:refused (not found, or not allowed now)",
        "2:bad usage (an unknown command or option, a malformed value)", "3:Redis or the archive unreachable"},
    footer = {"%nconveyor help COMMAND (or COMMAND --help) shows a command's usage with examples;"
        + " conveyor completion bash|zsh prints a shell completion script."},
    subcommands = {CliTx.Start.class, CliTx.Status.class, CliList.class, CliTx.Cancel.class, CliTx.Retry.class,
        CliPause.Pause.class, CliPause.Resume.class, CliTx.Switch.class, CliTx.Wake.class, CliEvent.class, CliTail.class, CliGroup.class, CliPipeline.class, CliSchedule.class, CliOwner.class,
        CliQuarantine.class, CliAudit.class, CliNewKey.class, CliCompletion.class, CliHelp.class})
final class Cli implements Callable<Integer> {
  static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);
  static final int OK = 0;
  static final int REFUSED = 1;
  static final int USAGE = 2;
  static final int UNAVAILABLE = 3;
  /** How often a long walk says how far it got, when a person runs the jar. */
  static final Duration PROGRESS_EVERY = Duration.ofSeconds(2);

  private final CliSession session;
  @Spec
  private CommandLine.Model.CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, scope = ScopeType.INHERIT, description = "Show this help.")
  private boolean help;

  @Option(names = {"-V", "--version"}, versionHelp = true, description = "Print the version.")
  private boolean version;

  Cli(CliSession session) {
    this.session = session;
  }

  @Option(names = "--json", scope = ScopeType.INHERIT, description = "Print one JSON document per line.")
  void json(boolean on) {
    session.json(on);
  }

  @Option(names = "--config", paramLabel = "FILE", scope = ScopeType.INHERIT,
      description = "The config file (default conf/config.json); CONVEYOR_* variables override it.")
  void config(Path file) {
    session.configFile(file);
  }

  /** conveyor with options only: the usage. */
  @Override
  public Integer call() {
    spec.commandLine().usage(session.out);
    return OK;
  }

  /**
   * True when the jar's arguments name a command (or ask for help) rather than start a node: a node is started
   * with no argument or with --config PATH alone.
   */
  static boolean handles(String[] args) {
    boolean node = args.length == 0 || args[0].equals("--config") && args.length <= 2
        || args.length == 1 && args[0].startsWith("--config=");
    return !node;
  }

  /** The jar's command line: config from --config (or conf/config.json) and the CONVEYOR_* variables. */
  static int main(String[] args) {
    return run(new CliSession(System.out, System.err,
        file -> ConfigLoader.load(Main.configFile(file), System.getenv()), PROGRESS_EVERY), args);
  }

  /** Runs the command on the given config (--config is then ignored); the exit code is OK, REFUSED, USAGE or UNAVAILABLE. */
  static int run(List<String> args, Config config, PrintStream out, PrintStream err) {
    return run(args, config, out, err, PROGRESS_EVERY);
  }

  /** The same, with long walks saying how far they got at most every progressEvery (zero: at every step). */
  static int run(List<String> args, Config config, PrintStream out, PrintStream err, Duration progressEvery) {
    return run(new CliSession(out, err, file -> config, progressEvery), args.toArray(String[]::new));
  }

  /** Runs the command line in a session made for it (a test's, with its own search ticker). */
  static int run(CliSession session, String[] args) {
    try (session) {
      return commandLine(session).execute(args);
    } finally {
      session.out.flush();
      session.err.flush();
    }
  }

  /** The command tree of one run, each command made with the session. */
  static CommandLine commandLine(CliSession session) {
    CliErrors errors = new CliErrors(session);
    return new CommandLine(new Cli(session), new Factory(session))
        .setExpandAtFiles(false)
        .setOut(new PrintWriter(new OutputStreamWriter(session.out, StandardCharsets.UTF_8), true))
        .setErr(new PrintWriter(new OutputStreamWriter(session.err, StandardCharsets.UTF_8), true))
        .setParameterExceptionHandler(errors)
        .setExecutionExceptionHandler(errors)
        .setExecutionStrategy(new CliAuditTrail(session, errors, java.time.Clock.systemUTC()));
  }

  /** Makes each command with the session (a constructor taking it), anything else as picocli would. */
  private record Factory(CliSession session) implements CommandLine.IFactory {
    @Override
    public <K> K create(Class<K> type) throws Exception {
      try {
        return type.getDeclaredConstructor(CliSession.class).newInstance(session);
      } catch (NoSuchMethodException e) {
        return CommandLine.defaultFactory().create(type);
      }
    }
  }

  /** The jar's version, from its manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Cli.class.getPackage().getImplementationVersion();
      return new String[] {"conveyor " + (v == null ? "(classes, not the jar)" : v)};
    }
  }
}
