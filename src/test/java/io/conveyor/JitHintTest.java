package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import org.junit.jupiter.api.Test;

class JitHintTest {
  @Test
  void c2_is_switched_off_on_two_cores_or_when_asked_and_never_where_it_is_not_in_use() {
    assertTrue(JitHint.c2Off(Config.Compiler.AUTO, 2, "4"), "auto on two processors");
    assertTrue(JitHint.c2Off(Config.Compiler.AUTO, 1, "4"));
    assertFalse(JitHint.c2Off(Config.Compiler.AUTO, 4, "4"), "four cores keep C2");
    assertTrue(JitHint.c2Off(Config.Compiler.C1, 16, "4"), "c1 on any machine");
    assertFalse(JitHint.c2Off(Config.Compiler.JVM, 2, "4"), "jvm leaves the JVM as started");
    assertFalse(JitHint.c2Off(Config.Compiler.C1, 2, "1"), "C1 alone already");
    assertFalse(JitHint.c2Off(Config.Compiler.C1, 2, null), "no tiers (C2 may be all there is) or not HotSpot");
    assertFalse(JitHint.c2Off(Config.Compiler.C1, 2, "3"), "stopped at a C1 level already");
  }

  @Test
  void with_c2_left_on_two_cores_the_start_log_says_c1_alone_is_faster_here() {
    String hint = JitHint.hint(2, "4");
    assertTrue(hint != null && hint.contains("node.compiler auto") && hint.contains("2 processors"), hint);
    assertTrue(JitHint.hint(1, "4").contains("1 processor:"), JitHint.hint(1, "4"));
    assertNull(JitHint.hint(2, "1"), "C1 alone already");
    assertNull(JitHint.hint(4, "4"), "four cores keep the defaults");
    assertNull(JitHint.hint(2, null), "no HotSpot bean: nothing known");
  }
}
