package io.conveyor.redis;

import io.vertx.redis.client.Response;
import io.vertx.redis.client.ResponseType;
import java.util.Set;

/**
 * Redis did not answer: no connection, no reply in time, or a server that cannot serve now (loading,
 * busy, read-only, out of memory, no master). Worth a retry later; anything else Redis refuses (a script
 * error, a wrong type) is a bug, not an outage, and passes through unchanged.
 */
public class RedisUnavailable extends RuntimeException {
  /** Error replies that say "not now", not "never". */
  private static final Set<String> TRANSIENT = Set.of("LOADING", "BUSY", "MASTERDOWN", "READONLY", "OOM",
      "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "MISCONF",
      // a Redis Cluster failing over: a slot that moved again after the link followed one MOVED (or a master that
      // became a replica: its old slots answer MOVED), and a WAIT cut short by that demotion (UNBLOCKED): the write
      // may or may not stand on the new master, so the caller reads back, as after any outage (bench/chaos's
      // redis-cluster-master-pause once answered such starts 500)
      "MOVED", "ASK", "UNBLOCKED",
      // not a server's: the client's own answer to commands that were waiting when their connection closed
      "CONNECTION_CLOSED");

  public RedisUnavailable(Throwable cause) {
    super("Redis did not answer: " + cause.getMessage(), cause);
  }

  private RedisUnavailable(String message) {
    super(message);
  }

  /**
   * The master ran the script, but fewer replicas than redis.waitReplicas had its writes in time: the
   * writes stand (and are read back), yet a failover now could drop them, so the caller is not told "done".
   */
  public static final class NotReplicated extends RedisUnavailable {
    NotReplicated(String message) {
      super(message);
    }
  }

  /**
   * The command never reached Redis: no connection could be made (refused, unreachable), or this node's backlog for
   * it was full. Nothing ran, so a caller may send it elsewhere (a start that may go to any partition is placed
   * again once, with a new txId); any other RedisUnavailable may have run.
   */
  public static final class NotSent extends RedisUnavailable {
    NotSent(Throwable cause) {
      super(cause);
    }
  }

  /** A connect that failed (java.net.ConnectException anywhere in the chain): the command was never written. */
  static boolean neverConnected(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof java.net.ConnectException || String.valueOf(t.getMessage()).contains("Connection refused")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Redis refused a write for memory (OOM: used_memory above maxmemory). A script sent with flags (Redis 7) is
   * refused whole; one without (Redis 6.x) may have written part of its work first, which is why the memory
   * guard refuses starts well before this.
   */
  public static final class Full extends RedisUnavailable {
    Full(Throwable cause) {
      super("Redis is full: it refused a write (" + cause.getMessage() + "); running transactions finish and are "
          + "archived, which frees memory; retry in a few seconds, or raise maxmemory");
    }
  }

  /** An OOM reply, alone or wrapped (a script's error, a batch's "ERR [i] OOM …"). */
  static boolean isOom(String message) {
    return message != null && (message.startsWith("OOM ") || message.contains("-OOM ") || message.contains("] OOM ")
        || message.contains("OOM command not allowed"));
  }

  /**
   * The failure of a batch: the client joins the error replies as "ERR [index] reply" lines; the first
   * tells whether it is an outage. The batch itself is answered the same way as one command.
   */
  static Throwable classifyBatch(Throwable e) {
    String m = String.valueOf(e.getMessage());
    if (e instanceof Response && isOom(m)) {
      return new Full(e);
    }
    java.util.regex.Matcher first = java.util.regex.Pattern.compile("^ERR \\[\\d+] ([^\\r\\n]*)").matcher(m);
    if (!(e instanceof Response) || !first.find()) {
      return classify(e);
    }
    String reply = first.group(1);
    int space = reply.indexOf(' ');
    String code = space < 0 ? reply : reply.substring(0, space);
    // a server's error reply starts with its code in capitals; anything else is the client's own failure (a
    // closed connection: "io.netty.channel.StacklessClosedChannelException"), an outage too
    if (!code.matches("[A-Z]+") || TRANSIENT.contains(code)) {
      return new RedisUnavailable(e);
    }
    return new IllegalStateException(reply, e);
  }

  /** The failure of a command as callers should see it. */
  static Throwable classify(Throwable e) {
    if (e instanceof RedisUnavailable) {
      return e;
    }
    if (e instanceof Response r && r.type() == ResponseType.ERROR) {
      String m = String.valueOf(e.getMessage());
      if (isOom(m)) {
        return new Full(e);
      }
      int space = m.indexOf(' ');
      return TRANSIENT.contains(space < 0 ? m : m.substring(0, space)) ? new RedisUnavailable(e) : e;
    }
    return neverConnected(e) ? new NotSent(e) : new RedisUnavailable(e);
  }
}
