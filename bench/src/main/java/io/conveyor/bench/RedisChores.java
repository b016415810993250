package io.conveyor.bench;

import io.conveyor.redis.RedisLink;
import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;

/** The bench's own Redis chores: measuring memory and removing what a run left behind. */
final class RedisChores {
  private RedisChores() {
  }

  /** used_memory from INFO memory, in bytes. */
  static Future<Long> usedMemory(RedisLink link) {
    return link.send(Request.cmd(Command.INFO).arg("memory")).map(r -> {
      for (String line : r.toString().split("\r?\n")) {
        if (line.startsWith("used_memory:")) {
          return Long.parseLong(line.substring("used_memory:".length()).trim());
        }
      }
      throw new IllegalStateException("INFO memory has no used_memory line");
    });
  }

  /**
   * Unlinks every key under a prefix, one SCAN page at a time. SCAN rather than KEYS so a shared Redis is
   * never blocked; the prefix is random per run, so nothing else can match it. Answers how many it removed.
   */
  static Future<Long> deletePrefix(RedisLink link, String prefix) {
    return deletePage(link, prefix + "*", "0", 0);
  }

  private static Future<Long> deletePage(RedisLink link, String pattern, String cursor, long removed) {
    return link.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(1000))
        .compose(page -> unlink(link, page.get(1)).compose(n -> {
          String nextCursor = page.get(0).toString();
          return nextCursor.equals("0") ? Future.succeededFuture(removed + n)
              : deletePage(link, pattern, nextCursor, removed + n);
        }));
  }

  private static Future<Long> unlink(RedisLink link, Response keys) {
    if (keys.size() == 0) {
      return Future.succeededFuture(0L);
    }
    Request unlink = Request.cmd(Command.UNLINK);
    keys.forEach(k -> unlink.arg(k.toString()));
    return link.send(unlink).map(Response::toLong);
  }
}
