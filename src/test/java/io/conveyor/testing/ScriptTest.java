package io.conveyor.testing;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Base of the script tests: a fresh harness (own prefix, hand-moved clock) per test, dropped after it. */
public abstract class ScriptTest {
  protected ScriptHarness h;

  @BeforeEach
  final void openHarness() {
    h = new ScriptHarness();
  }

  @AfterEach
  final void closeHarness() {
    h.close();
  }
}
