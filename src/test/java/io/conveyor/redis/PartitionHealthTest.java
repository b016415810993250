package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.config.Config;
import io.conveyor.testing.MutableTicker;
import java.net.ConnectException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PartitionHealthTest {
  private final MutableTicker ticker = new MutableTicker(1_000_000_000L);
  private final PartitionHealth health = new PartitionHealth(3, new Config.PartitionHealth(Duration.ofMillis(250),
      Duration.ofMillis(500), Duration.ofSeconds(2)), ticker);

  @Test
  void an_outage_marks_its_partition_failing_with_the_reason_and_an_answer_makes_it_ok_again() {
    health.failed(2, new RedisUnavailable(new ConnectException("Connection refused: 10.0.0.3:7002")));
    assertEquals(PartitionHealth.State.FAILING, health.state(2));
    assertTrue(health.status(2).reason().contains("Connection refused"), health.status(2).reason());
    assertEquals(List.of(0, 1), health.ok());
    health.succeeded(2);
    assertEquals(PartitionHealth.State.OK, health.state(2));
  }

  @Test
  void a_tracker_no_probe_feeds_keeps_no_outage_so_nothing_bound_there_is_refused_for_good() {
    PartitionHealth shell = PartitionHealth.ignoring(3);
    shell.failed(2, new RedisUnavailable(new ConnectException("Connection refused: 10.0.0.3:7002")));
    shell.outSince(1, 0);
    assertEquals(List.of(0, 1, 2), shell.ok(), "every call goes to Redis, which answers for itself");
  }

  @Test
  void a_script_error_a_full_redis_or_too_few_replicas_are_answers_not_outages() {
    health.failed(0, new IllegalStateException("ERR script error"));
    health.failed(1, new RedisUnavailable.Full(new IllegalStateException("OOM")));
    health.failed(2, new RedisUnavailable.NotReplicated("written on the master, 0 of 1 replicas"));
    assertEquals(List.of(0, 1, 2), health.ok());
  }

  @Test
  void a_call_out_longer_than_suspect_after_makes_an_ok_partition_suspect_but_leaves_a_failing_one_failing() {
    long sent = ticker.nanos();
    ticker.advance(Duration.ofMillis(249));
    health.outSince(0, sent);
    assertEquals(PartitionHealth.State.OK, health.state(0));
    ticker.advance(Duration.ofMillis(1));
    health.outSince(0, sent);
    assertEquals(PartitionHealth.State.SUSPECT, health.state(0));
    assertTrue(health.status(0).reason().contains("250 ms"), health.status(0).reason());
    health.failed(1, new RedisUnavailable(new IllegalStateException("timeout")));
    health.outSince(1, sent);
    assertEquals(PartitionHealth.State.FAILING, health.state(1));
  }

  @Test
  void starts_that_may_go_anywhere_pick_only_ok_partitions_or_any_when_none_is_ok() {
    health.failed(1, new RedisUnavailable(new IllegalStateException("down")));
    Set<Integer> picked = new HashSet<>();
    for (int i = 0; i < 200; i++) {
      picked.add(health.pickForStart());
    }
    assertEquals(Set.of(0, 2), picked);
    assertEquals(2, health.pickOtherThan(0));
    health.failed(0, new RedisUnavailable(new IllegalStateException("down")));
    health.failed(2, new RedisUnavailable(new IllegalStateException("down")));
    assertEquals(-1, health.pickOtherThan(1));
    for (int i = 0; i < 200; i++) {
      picked.add(health.pickForStart());
    }
    assertEquals(Set.of(0, 1, 2), picked);
  }

  @Test
  void a_connect_that_failed_is_known_never_to_have_reached_redis() {
    assertTrue(RedisUnavailable.classify(new ConnectException("Connection refused")) instanceof RedisUnavailable.NotSent);
    assertTrue(!(RedisUnavailable.classify(new java.util.concurrent.TimeoutException("no reply"))
        instanceof RedisUnavailable.NotSent));
  }
}
