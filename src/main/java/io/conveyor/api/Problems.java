package io.conveyor.api;

import io.conveyor.domain.Transactions;
import io.conveyor.model.Ids;
import io.conveyor.model.TxException;
import io.conveyor.redis.RedisUnavailable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Any failure as a client is told of it: a refusal stays what it is; Redis not answering is 503
 * unavailable; anything else is a bug, 500 internal, with an errorId that also names the one ERROR log
 * line holding its stack trace.
 */
final class Problems {
  private static final Logger log = LoggerFactory.getLogger(Problems.class);

  private Problems() {
  }

  static TxException of(Throwable e, String where) {
    if (e instanceof TxException t) {
      return t;
    }
    if (e instanceof RedisUnavailable) {
      return Transactions.unavailable(e);
    }
    String errorId = Ids.errorId();
    log.error("{} failed unexpectedly (errorId {})", where, errorId, e);
    return TxException.internal(errorId);
  }
}
