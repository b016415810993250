package io.conveyor.bench;

import io.conveyor.redis.RedisLink;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.RedisOptions;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bench's own Redis chores: measuring memory and CPU per master, and removing what a run left behind.
 * On a Redis Cluster each master is asked on a connection of its own (CLUSTER NODES names them).
 */
final class RedisChores {
  private RedisChores() {
  }

  /** One master's figures at a moment: CPU seconds used so far (user + sys), and this run's stateH keys. */
  record Master(double cpuSeconds, long stateKeys, long commands) {
  }

  /** used_memory from INFO memory, in bytes, summed over the masters. */
  static Future<Long> usedMemory(RedisLink link, Vertx vertx) {
    return eachMaster(link, vertx, one -> one.send(Request.cmd(Command.INFO).arg("memory"))
        .map(r -> (long) field(r.toString(), "used_memory")))
        .map(all -> all.values().stream().mapToLong(Long::longValue).sum());
  }

  private static double field(String info, String name) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(name + ":")) {
        return Double.parseDouble(line.substring(name.length() + 1).trim());
      }
    }
    throw new IllegalStateException("INFO has no " + name + " line");
  }

  /** The masters as "host:port": the cluster's (CLUSTER NODES), or the one server's. */
  private static Future<List<String>> masterAddresses(RedisLink link) {
    return link.send(Request.cmd(Command.CLUSTER).arg("NODES")).map(r -> {
      List<String> out = new ArrayList<>();
      for (String line : r.toString().split("\r?\n")) {
        String[] f = line.split(" ");
        if (f.length > 2 && f[2].contains("master") && !f[2].contains("fail")) {
          out.add(f[1].replaceFirst("@.*", ""));
        }
      }
      return out;
    }).recover(e -> Future.succeededFuture(List.of())); // not a cluster: the link's one server
  }

  /** Runs work against each master on a connection of its own (or once on the link, for one server). */
  private static <T> Future<Map<String, T>> eachMaster(RedisLink link, Vertx vertx,
                                                       java.util.function.Function<RedisLink, Future<T>> work) {
    return masterAddresses(link).compose(addresses -> {
      if (addresses.isEmpty()) {
        return work.apply(link).map(t -> Map.of("redis", t));
      }
      Map<String, Future<T>> each = new LinkedHashMap<>();
      for (String a : addresses) {
        RedisLink one = new RedisLink(vertx, new RedisOptions().setConnectionString("redis://" + a));
        each.put(a, work.apply(one).eventually(one::close));
      }
      return Future.all(new ArrayList<>(each.values())).map(all -> {
        Map<String, T> out = new LinkedHashMap<>();
        each.forEach((a, f) -> out.put(a, f.result()));
        return out;
      });
    });
  }

  /** Each master's CPU seconds, commands processed, and stateH keys under the prefix. */
  static Future<Map<String, Master>> masters(RedisLink link, Vertx vertx, String prefix) {
    return eachMaster(link, vertx, one -> one.send(Request.cmd(Command.INFO).arg("all")).compose(info ->
        count(one, prefix + "*stateH:*", "0", 0).map(keys -> new Master(field(info.toString(), "used_cpu_user")
            + field(info.toString(), "used_cpu_sys"), keys, (long) field(info.toString(), "total_commands_processed")))));
  }

  private static Future<Long> count(RedisLink link, String pattern, String cursor, long n) {
    return link.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(1000))
        .compose(page -> {
          String next = page.get(0).toString();
          long found = n + page.get(1).size();
          return next.equals("0") ? Future.succeededFuture(found) : count(link, pattern, next, found);
        });
  }

  /**
   * Unlinks every key under a prefix, on every master, one SCAN page at a time. SCAN rather than KEYS so a
   * shared Redis is never blocked; the prefix is random per run, so nothing else can match it. Answers how
   * many it removed.
   */
  /** The keys under prefix by family (the name up to its first ':' after the prefix and any hash tag), every master. */
  static Future<Map<String, Long>> census(RedisLink link, Vertx vertx, String prefix) {
    return eachMaster(link, vertx, one -> censusPage(one, prefix, "0", new java.util.TreeMap<>()))
        .map(all -> {
          Map<String, Long> sum = new java.util.TreeMap<>();
          all.values().forEach(m -> m.forEach((k, v) -> sum.merge(k, v, Long::sum)));
          return sum;
        });
  }

  private static Future<Map<String, Long>> censusPage(RedisLink link, String prefix, String cursor,
                                                      Map<String, Long> seen) {
    return link.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(prefix + "*").arg("COUNT").arg(1000))
        .compose(page -> {
          page.get(1).forEach(k -> {
            String name = k.toString().substring(prefix.length()).replaceFirst("^\\{[^}]*\\}:?", "");
            int colon = name.indexOf(':');
            seen.merge(colon < 0 ? name : name.substring(0, colon), 1L, Long::sum);
          });
          String next = page.get(0).toString();
          return next.equals("0") ? Future.succeededFuture(seen) : censusPage(link, prefix, next, seen);
        });
  }

  /** The hashes of one family under prefix (key → their fields), every master: what the counting keys hold. */
  static Future<Map<String, String>> hashes(RedisLink link, Vertx vertx, String prefix, String family) {
    return eachMaster(link, vertx, one -> one.send(Request.cmd(Command.SCAN).arg("0").arg("MATCH")
        .arg(prefix + "*" + family + "*").arg("COUNT").arg(100000)).compose(page -> {
          Map<String, String> out = new java.util.TreeMap<>();
          List<Future<Response>> each = new ArrayList<>();
          List<String> names = new ArrayList<>();
          page.get(1).forEach(k -> {
            names.add(k.toString());
            each.add(one.send(Request.cmd(Command.HGETALL).arg(k.toString())));
          });
          return Future.all(each).map(all -> {
            for (int i = 0; i < names.size(); i++) {
              out.put(names.get(i), String.valueOf(each.get(i).result()));
            }
            return out;
          });
        })).map(all -> {
          Map<String, String> sum = new java.util.TreeMap<>();
          all.values().forEach(sum::putAll);
          return sum;
        });
  }

  static Future<Long> deletePrefix(RedisLink link, Vertx vertx, String prefix) {
    return eachMaster(link, vertx, one -> deletePage(one, prefix + "*", "0", 0))
        .map(all -> all.values().stream().mapToLong(Long::longValue).sum());
  }

  private static Future<Long> deletePage(RedisLink link, String pattern, String cursor, long removed) {
    return link.send(Request.cmd(Command.SCAN).arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(1000))
        .compose(page -> unlink(link, page.get(1)).compose(n -> {
          String nextCursor = page.get(0).toString();
          return nextCursor.equals("0") ? Future.succeededFuture(removed + n)
              : deletePage(link, pattern, nextCursor, removed + n);
        }));
  }

  /** One key at a time on a cluster master would be slow; keys of one page may be in many slots, so each goes alone. */
  private static Future<Long> unlink(RedisLink link, Response keys) {
    if (keys.size() == 0) {
      return Future.succeededFuture(0L);
    }
    List<Future<Response>> each = new ArrayList<>();
    keys.forEach(k -> each.add(link.send(Request.cmd(Command.UNLINK).arg(k.toString()))));
    return Future.all(each).map(all -> (long) keys.size());
  }
}
