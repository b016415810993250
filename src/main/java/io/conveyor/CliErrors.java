package io.conveyor;

import io.conveyor.config.ConfigException;
import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.vertx.core.json.DecodeException;
import java.io.PrintStream;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * What the command line says when it cannot do what it was asked, and its exit code: bad usage (2) names the
 * nearest command or option and lists those there are; a refusal of the domain is 1 (2 for invalid input);
 * Redis or the archive out of reach is 3.
 */
record CliErrors(CliSession session) implements CommandLine.IParameterExceptionHandler,
    CommandLine.IExecutionExceptionHandler {

  @Override
  public int handleParseException(ParameterException e, String[] args) {
    CommandLine cl = e.getCommandLine();
    String where = cl.getCommandSpec().qualifiedName();
    List<String> commands = cl.getSubcommands().values().stream().map(CommandLine::getCommandName).distinct()
        .toList();
    String listed = commands.isEmpty() ? "" : "; commands: " + String.join(", ", commands);
    PrintStream err = session.err;
    if (e instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
      String given = u.getUnmatched().get(0);
      if (given.startsWith("-")) {
        String name = given.contains("=") ? given.substring(0, given.indexOf('=')) : given;
        List<String> options = cl.getCommandSpec().options().stream().filter(o -> !o.hidden())
            .map(OptionSpec::longestName).toList();
        err.println(where + ": unknown option " + name + Strict.suggestion(name, options) + "; options: "
            + String.join(" ", options));
      } else if (!commands.isEmpty() && cl.getCommandSpec().positionalParameters().isEmpty()) {
        err.println(where + ": no command " + given + Strict.suggestion(given, cl.getSubcommands().keySet())
            + listed);
      } else {
        err.println(where + ": unexpected argument " + given + " (" + String.join(" ", u.getUnmatched()) + ")");
      }
    } else {
      boolean noAction = e.getMessage().startsWith("Missing required subcommand");
      err.println(where + ": " + (noAction ? "expected a command" + listed.substring(1) : e.getMessage()));
    }
    err.println("See '" + where + " --help'.");
    return Cli.USAGE;
  }

  @Override
  public int handleExecutionException(Exception e, CommandLine cl, ParseResult parsed) {
    PrintStream err = session.err;
    String where = cl.getCommandSpec().qualifiedName();
    if (e instanceof TxException t) {
      err.println(where + ": " + (session.json() ? t.toJson().encode() : t.getMessage()));
      return switch (t.kind()) {
        case UNAVAILABLE -> Cli.UNAVAILABLE;
        case INVALID_INPUT -> Cli.USAGE;
        default -> Cli.REFUSED;
      };
    }
    if (e instanceof ConfigException) {
      err.println(where + ": " + e.getMessage());
      return Cli.USAGE;
    }
    if (e instanceof IllegalArgumentException || e instanceof DecodeException) {
      err.println(where + ": " + e.getMessage());
      err.println("See '" + where + " --help'.");
      return Cli.USAGE;
    }
    // Redis or the archive could not be reached or answered with an error
    err.println(where + ": cannot reach Redis or the archive: " + e.getMessage());
    return Cli.UNAVAILABLE;
  }
}
