package io.conveyor;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.conveyor.config.Config;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.management.ObjectName;

/**
 * The node's JIT compiler (node.compiler), chosen at start, and the start log's word on it. On two cores or fewer,
 * where the node shares them with Redis, C2's compiler thread costs more than its code saves (docs/performance.md,
 * decisions.md "The node switches C2 off itself"): a node started with the JVM's defaults adds a compiler directive
 * (JEP 165, what jcmd Compiler.directives_add does) that excludes every method from C2, so what C1 compiled with
 * profiling is compiled again by C1 alone, as with -XX:TieredStopAtLevel=1. The flag needs the command line; the
 * directive is what a jar can do for itself.
 */
final class JitHint {
  static final String DIRECTIVE = "[{match: \"*.*\", c2: {Exclude: true}}]";
  /** What the directive answered, once per JVM (a second node in the same JVM, as tests start them, adds none). */
  private static String applied;

  private JitHint() {
  }

  /** Chooses the compiler as node.compiler says, for this JVM on this machine; answers what to log, or null. */
  static synchronized String apply(Config.Compiler mode) {
    String compilationMode = vmOption("CompilationMode");
    // C2 is what C1's code moves on to only with tiers in the default mode (high-only has no C1 to fall back to)
    String stop = "true".equals(vmOption("TieredCompilation"))
        && (compilationMode == null || "default".equals(compilationMode)) ? vmOption("TieredStopAtLevel") : null;
    int processors = Runtime.getRuntime().availableProcessors();
    if (!c2Off(mode, processors, stop)) {
      return hint(processors, stop);
    }
    if (applied == null) {
      applied = addDirective(mode, processors);
    }
    return applied;
  }

  private static String addDirective(Config.Compiler mode, int processors) {
    try {
      Path file = Files.createTempFile("conveyor-c1-", ".json");
      try {
        Files.writeString(file, DIRECTIVE);
        Object said = ManagementFactory.getPlatformMBeanServer().invoke(
            new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerDirectivesAdd",
            new Object[] {new String[] {file.toString()}}, new String[] {String[].class.getName()});
        String answer = String.valueOf(said).trim();
        if (!answer.contains("added")) { // the command says what went wrong in its output, not by throwing
          return "C2 could not be switched off (" + answer + "); " + hint(processors, "4");
        }
        return "C2 switched off by a compiler directive (node.compiler " + mode.name().toLowerCase(java.util.Locale.ROOT)
            + ", " + processors + " processor" + (processors == 1 ? "" : "s") + "): the node compiles with C1 alone, as "
            + "with -XX:TieredStopAtLevel=1 (" + answer + ")";
      } finally {
        Files.deleteIfExists(file);
      }
    } catch (Exception | LinkageError e) {
      return "C2 could not be switched off (" + e + "); " + hint(processors, "4");
    }
  }

  /**
   * Whether to switch C2 off: c1 always, auto on two processors or fewer; only when C1's code moves on to C2
   * (tieredStopAtLevel 4, given as null without tiers or in another CompilationMode, where C2 may be all there is,
   * and where the JVM is not HotSpot).
   */
  static boolean c2Off(Config.Compiler mode, int processors, String tieredStopAtLevel) {
    if (!"4".equals(tieredStopAtLevel)) {
      return false; // not HotSpot, no tiers, or a mode or stop level where C2 is not C1's next step
    }
    return mode == Config.Compiler.C1 || (mode == Config.Compiler.AUTO && processors <= 2);
  }

  /**
   * What to say when C2 stays on (node.compiler jvm): on two cores or fewer, that C1 alone is faster here. Null when
   * there is nothing to say.
   */
  static String hint(int processors, String tieredStopAtLevel) {
    if (processors > 2 || !"4".equals(tieredStopAtLevel)) {
      return null;
    }
    return "the JVM compiles with C2 on " + processors + " processor" + (processors == 1 ? "" : "s")
        + ": C1 alone (node.compiler auto, the default, or -XX:TieredStopAtLevel=1) is faster here, about 1.5x the"
        + " throughput and a third of the p99 in bench/peers (README, Configuration)";
  }

  /** A HotSpot option's value, or null where HotSpot's diagnostic bean is missing. */
  private static String vmOption(String name) {
    try {
      return ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).getVMOption(name).getValue();
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }
}
