package io.conveyor;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/** The start log's word on the JIT compiler, for Node. */
final class JitHint {
  private JitHint() {
  }

  /** The hint for this JVM on this machine, or null. */
  static String forThisJvm() {
    return hint(Runtime.getRuntime().availableProcessors(), tieredStopAtLevel());
  }

  /**
   * On two cores or fewer, where the node shares them with Redis, C2's compiler thread costs more than its code
   * saves (README, Configuration; docs/performance.md): the start log says so unless the JVM runs C1 alone.
   * Null when there is nothing to say.
   */
  static String hint(int processors, String tieredStopAtLevel) {
    if (processors > 2 || "1".equals(tieredStopAtLevel) || tieredStopAtLevel == null) {
      return null;
    }
    return "the JVM compiles with C2 on " + processors + " processor" + (processors == 1 ? "" : "s")
        + ": -XX:TieredStopAtLevel=1 (C1 alone) is faster here, about 1.5x the throughput and a third of the p99"
        + " in bench/peers (README, Configuration)";
  }

  /** The JVM's TieredStopAtLevel, or null where HotSpot's diagnostic bean is missing. */
  private static String tieredStopAtLevel() {
    try {
      return ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
          .getVMOption("TieredStopAtLevel").getValue();
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }
}
