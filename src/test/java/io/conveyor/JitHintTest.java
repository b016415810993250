package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JitHintTest {
  @Test
  void two_cores_with_c2_get_the_hint_and_nothing_else_does() {
    String hint = JitHint.hint(2, "4");
    assertTrue(hint != null && hint.contains("-XX:TieredStopAtLevel=1") && hint.contains("2 processors"), hint);
    assertTrue(JitHint.hint(1, "4").contains("1 processor:"), JitHint.hint(1, "4"));
    assertNull(JitHint.hint(2, "1"), "C1 alone already");
    assertNull(JitHint.hint(4, "4"), "four cores keep the defaults");
    assertNull(JitHint.hint(2, null), "no HotSpot bean: nothing known");
  }
}
