package io.conveyor;

import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * conveyor completion bash|zsh: a completion script for the command line, generated from its commands and
 * options by picocli. The script completes the command `conveyor` (an alias or a script that runs the jar).
 * picocli's script is written for bash and loads bash completion into zsh itself, so zsh gets the same one.
 */
@Command(name = "completion", description = {"Print a bash or zsh completion script.",
    "It completes `conveyor`: an alias or a script that runs the jar."}, footerHeading = "%nExamples:%n",
    footer = {"  alias conveyor='java -jar /path/to/conveyor.jar'", "  source <(conveyor completion bash)",
        "  conveyor completion zsh > ~/.conveyor-completion && echo 'source ~/.conveyor-completion' >> ~/.zshrc"})
final class CliCompletion {
  private final CliSession s;
  @Spec
  CommandSpec spec;

  CliCompletion(CliSession s) {
    this.s = s;
  }

  @Command(name = "bash", description = "For bash: source <(conveyor completion bash)")
  int bash() {
    s.out.print(AutoComplete.bash("conveyor", spec.root().commandLine()));
    return Cli.OK;
  }

  @Command(name = "zsh", description = "For zsh (the bash script, which turns on bashcompinit in zsh)")
  int zsh() {
    s.out.println("# conveyor completion for zsh: picocli's script runs bashcompinit when it is sourced by zsh");
    s.out.print(AutoComplete.bash("conveyor", spec.root().commandLine()));
    return Cli.OK;
  }
}
