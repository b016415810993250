package io.conveyor.lease;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.MutableTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A node takes work only while Redis cannot have judged it dead: within a window of its last accepted beat. */
class RegistrationTest {
  @Test
  void a_beat_counts_from_when_it_was_sent_and_an_older_answer_never_moves_it_back() {
    MutableTicker ticker = new MutableTicker(0);
    Registration r = new Registration(Duration.ofSeconds(4), ticker);
    assertTrue(r.recent(), "a new node may take work until its first beat is due");
    long sent = r.now();
    ticker.advance(Duration.ofSeconds(3));
    r.confirmed(sent); // its answer came late: the window runs from the send
    ticker.advance(Duration.ofSeconds(1));
    assertFalse(r.recent(), "four seconds after the beat was sent, Redis may have let the key expire");
    r.confirmed(r.now());
    assertTrue(r.recent());
    r.confirmed(sent);
    assertTrue(r.recent(), "an older beat's answer, coming last, does not undo a newer one");
  }
}
