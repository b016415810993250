package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.vertx.redis.client.impl.types.ErrorType;
import org.junit.jupiter.api.Test;

/** Which failures count as Redis not answering (503, retried) and which pass through as bugs. */
class RedisUnavailableTest {

  @Test
  void a_closed_connection_a_failover_or_a_loading_server_is_an_outage_a_script_error_is_not() {
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classify(ErrorType.create("CONNECTION_CLOSED")));
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classify(ErrorType.create(
        "READONLY You can't write against a read only replica.")));
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classify(ErrorType.create("CLUSTERDOWN The cluster is "
        + "down")));
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classify(new java.net.ConnectException("refused")));
    // a failover of a Redis Cluster master: a slot moved twice, or a WAIT cut short when its master became a replica
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classify(ErrorType.create("MOVED 313 127.0.0.1:5018")));
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classifyBatch(ErrorType.create(
        "ERR [1] UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")));
    ErrorType bug = ErrorType.create("ERR Error running script (call to f_1): user_script:3: bad argument");
    assertSame(bug, RedisUnavailable.classify(bug));
  }

  @Test
  void a_batch_is_judged_by_its_first_error_reply() {
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classifyBatch(ErrorType.create(
        "ERR [0] io.netty.channel.StacklessClosedChannelException")));
    assertInstanceOf(RedisUnavailable.class, RedisUnavailable.classifyBatch(ErrorType.create(
        "ERR [0] READONLY You can't write against a read only replica.")));
    assertInstanceOf(IllegalStateException.class, RedisUnavailable.classifyBatch(ErrorType.create(
        "ERR [0] WRONGTYPE Operation against a key holding the wrong kind of value")));
  }
}
