package io.conveyor;

import io.conveyor.model.Strict;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * conveyor help [COMMAND [ACTION]]: the usage of the command line or of one command, as COMMAND --help prints
 * it (picocli's own help command would clash with the -h every command inherits).
 */
@Command(name = "help", helpCommand = true, description = "Show the usage of conveyor or of a command.",
    footerHeading = "%nExamples:%n", footer = {"  conveyor help list", "  conveyor help group drain"})
final class CliHelp implements Callable<Integer> {
  private final CliSession s;
  @Spec
  CommandSpec spec;
  @Parameters(arity = "0..*", paramLabel = "COMMAND", description = "A command, and an action of it.")
  List<String> command = List.of();

  CliHelp(CliSession s) {
    this.s = s;
  }

  @Override
  public Integer call() {
    CommandLine at = spec.root().commandLine();
    for (String name : command) {
      CommandLine next = at.getSubcommands().get(name);
      if (next == null) {
        throw new IllegalArgumentException("no command " + name + Strict.suggestion(name,
            at.getSubcommands().keySet()) + "; commands: " + String.join(", ", at.getSubcommands().keySet()));
      }
      at = next;
    }
    at.usage(s.out);
    return Cli.OK;
  }
}
