package io.conveyor.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RoundFailuresTest {
  @Test
  void a_streak_of_failed_rounds_is_one_warning_and_its_end_one_line() {
    Logger logger = (Logger) LoggerFactory.getLogger("io.conveyor.lease.RoundFailuresTest.role");
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.start();
    logger.addAppender(seen);
    logger.setLevel(Level.INFO);
    RoundFailures rounds = new RoundFailures(logger, "archive (partition 2)");
    rounds.worked(); // nothing failed: nothing to say
    for (int i = 0; i < 40; i++) {
      rounds.failed(new IllegalStateException("Connection refused: /127.0.0.1:7001"));
    }
    assertEquals(40, rounds.streak());
    rounds.worked();
    rounds.worked();
    rounds.failed(new IllegalStateException("again"));
    List<String> lines = seen.list.stream().map(e -> e.getLevel() + " " + e.getFormattedMessage()).toList();
    assertEquals(List.of(
        "WARN archive (partition 2): a round failed on Redis (Connection refused: /127.0.0.1:7001); retrying, logged "
            + "again when rounds work",
        "INFO archive (partition 2): rounds work again after 40 failed",
        "WARN archive (partition 2): a round failed on Redis (again); retrying, logged again when rounds work"), lines);
    assertEquals(1, rounds.streak());
  }
}
