package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.redis.client.Command;
import io.vertx.redis.client.Request;
import io.vertx.redis.client.Response;
import java.util.ArrayList;
import java.util.List;

/**
 * The node's Lua scripts, read once from the jar; run by EVALSHA, falling back to EVAL on NOSCRIPT. Flagged (for a
 * Redis 7 or later), each is sent with its #!lua line (see ScriptFlags); else as it is written.
 */
public final class Scripts {
  public final LuaScript start = LuaScript.load("start");
  public final LuaScript dequeue = LuaScript.load("dequeue");
  public final LuaScript checkpoint = LuaScript.load("checkpoint");
  public final LuaScript complete = LuaScript.load("complete");
  public final LuaScript getState = LuaScript.load("get-state");
  public final LuaScript putPipeline = LuaScript.load("put-pipeline");
  public final LuaScript pipelineCopy = LuaScript.load("pipeline-copy");
  public final LuaScript pipelineState = LuaScript.load("pipeline-state");
  public final LuaScript rollout = LuaScript.load("rollout");
  public final LuaScript rolloutEvent = LuaScript.load("rollout-event");
  public final LuaScript adminEvent = LuaScript.load("admin-event");
  public final LuaScript ownerPut = LuaScript.load("owner-put");
  public final LuaScript requeue = LuaScript.load("requeue");
  public final LuaScript hop = LuaScript.load("hop");
  public final LuaScript fork = LuaScript.load("fork");
  public final LuaScript groupState = LuaScript.load("group-state");
  public final LuaScript schedulePut = LuaScript.load("schedule-put");
  public final LuaScript scheduleDue = LuaScript.load("schedule-due");
  public final LuaScript scheduleFire = LuaScript.load("schedule-fire");
  public final LuaScript scheduleDone = LuaScript.load("schedule-done");
  public final LuaScript cancel = LuaScript.load("cancel");
  public final LuaScript cancelWalk = LuaScript.load("cancel-walk");
  public final LuaScript pause = LuaScript.load("pause");
  public final LuaScript resume = LuaScript.load("resume");
  public final LuaScript migrate = LuaScript.load("migrate");
  public final LuaScript lease = LuaScript.load("lease");
  public final LuaScript heartbeat = LuaScript.load("heartbeat");
  public final LuaScript reap = LuaScript.load("reap");
  public final LuaScript judge = LuaScript.load("judge");
  public final LuaScript leaseBreak = LuaScript.load("lease-break");
  public final LuaScript sleep = LuaScript.load("sleep");
  public final LuaScript retry = LuaScript.load("retry");
  public final LuaScript rerun = LuaScript.load("rerun");
  public final LuaScript setSwitch = LuaScript.load("set-switch");
  public final LuaScript wake = LuaScript.load("wake");
  public final LuaScript rate = LuaScript.load("rate");
  public final LuaScript archive = LuaScript.load("archive");
  public final LuaScript webhook = LuaScript.load("webhook");
  public final LuaScript webhookCancel = LuaScript.load("webhook-cancel");
  public final LuaScript progress = LuaScript.load("progress");
  public final LuaScript sample = LuaScript.load("sample");
  public final LuaScript statsRead = LuaScript.load("stats-read");
  public final LuaScript statsAdd = LuaScript.load("stats-add");
  public final LuaScript search = LuaScript.load("search");
  public final LuaScript ring = LuaScript.load("ring");
  public final LuaScript eventsTrim = LuaScript.load("trim");
  public final LuaScript archiveQuarantine = LuaScript.load("archive-quarantine");
  public final LuaScript archiveRetry = LuaScript.load("archive-retry");
  public final LuaScript archiveDrop = LuaScript.load("archive-drop");
  public final LuaScript memory = LuaScript.load("memory");
  public final LuaScript stuck = LuaScript.load("stuck");
  public final LuaScript eventSend = LuaScript.load("event-send");
  public final LuaScript eventWait = LuaScript.load("event-wait");
  public final LuaScript eventReturn = LuaScript.load("event-return");
  public final LuaScript dataKeyPut = LuaScript.load("data-key-put");
  public final LuaScript dataKeyRewrap = LuaScript.load("data-key-rewrap");
  /** What is sent for each script (by name): flagged or as written. */
  private final java.util.Map<String, LuaScript> sent;
  /** The hot scripts as a function library (Redis 7 and later), or null: every script by EVALSHA. */
  private final FunctionLibrary library;

  /** Scripts as written, with no flags (any Redis from 6.2). */
  public Scripts() {
    this(false);
  }

  /** flagged: each script is sent with its #!lua line, for a Redis 7 or later. */
  public Scripts(boolean flagged) {
    java.util.Map<String, LuaScript> m = new java.util.HashMap<>();
    for (LuaScript s : all()) {
      m.put(s.name(), flagged ? s.withShebang(ScriptFlags.shebang(s.name())) : s);
    }
    sent = java.util.Map.copyOf(m);
    library = flagged ? FunctionLibrary.of(m.keySet()) : null;
  }

  /** The scripts for the Redis link reaches: flagged when it runs Redis 7 or later (INFO server). */
  public static Future<Scripts> forServer(RedisLink link) {
    return link.send(Request.cmd(Command.INFO).arg("server")).map(info -> {
      java.util.regex.Matcher v = java.util.regex.Pattern.compile("redis_version:([0-9.]+)").matcher(info.toString());
      return new Scripts(v.find() && ScriptFlags.supported(v.group(1)));
    });
  }

  /** The hot scripts' function library, or null (a Redis before 7: every script by EVALSHA). */
  FunctionLibrary library() {
    return library;
  }

  /** Whether scripts are sent with flags. */
  public boolean flagged() {
    return sent.get(start.name()) != start;
  }

  /** What is sent for this script: its flagged form on a Redis with flags (a script not of this set as it is). */
  public LuaScript sent(LuaScript script) {
    return sent.getOrDefault(script.name(), script);
  }

  public List<LuaScript> all() {
    return List.of(start, dequeue, checkpoint, complete, getState, putPipeline, pipelineCopy, pipelineState, rollout, rolloutEvent, ownerPut, requeue, hop, fork, groupState, schedulePut, scheduleDue, scheduleFire, scheduleDone, cancel, lease, heartbeat, reap, judge, leaseBreak, sleep, retry, rerun, setSwitch,
        wake, rate, archive, webhook, webhookCancel, progress, sample, statsRead, search, eventsTrim, ring,
        archiveQuarantine, archiveRetry, archiveDrop, memory, cancelWalk, stuck, eventSend, eventWait, eventReturn,
        pause, resume, migrate, adminEvent, dataKeyPut, dataKeyRewrap, statsAdd);
  }

  /** Loads every script into Redis (a syntax error fails here, at start), and the function library where there is one. */
  public Future<Void> loadAll(RedisLink link) {
    List<Future<Response>> loads = new ArrayList<>();
    if (library != null) {
      // not a reason to refuse to start: FUNCTION LOAD is refused above maxmemory, where SCRIPT LOAD is not, and
      // without the library each call is made as its script (FunctionLibraryTest loads it in the suite)
      loads.add(load(link).map(ok -> null));
    }
    for (LuaScript s : sent.values()) {
      loads.add(link.send(Request.cmd(Command.SCRIPT).arg("LOAD").arg(s.source()))
          .recover(e -> Future.failedFuture(new IllegalStateException("script " + s.name() + ".lua: " + e.getMessage(), e))));
    }
    return Future.all(loads).mapEmpty();
  }

  /**
   * Loads the library; answers whether Redis has it now (loaded, or there already: a library of its name is this
   * one), and marks it usable or not. A refusal is logged at most once a minute.
   */
  private Future<Boolean> load(RedisLink link) {
    return link.send(Request.cmd(Command.FUNCTION).arg("LOAD").arg(library.source())).map(r -> true)
        .recover(e -> {
          boolean there = String.valueOf(e.getMessage()).contains("already exists");
          if (!there && library.warnDue(link.ticker().nanos())) {
            org.slf4j.LoggerFactory.getLogger(Scripts.class).warn("function library {} (the hot scripts) not loaded; "
                + "they run as scripts until it is (tried again at most once a second, said once a minute): {}",
                library.name(), e.getMessage());
          }
          return Future.succeededFuture(there);
        })
        .onSuccess(library::usable);
  }

  /**
   * Runs a script: by FCALL when it is in the function library and the library is usable, else by SHA. A call
   * that finds the library missing or refused (a restart without persistence, another cluster master, an ACL
   * without FCALL) is made again as its script at once, and the library is loaded again.
   */
  public Future<Response> call(RedisLink link, LuaScript script, List<String> keys, List<String> args) {
    String fn = function(link, script);
    if (fn == null) {
      return run(link, sent(script), keys, args);
    }
    long began = link.ticker().nanos();
    return link.send(request(Command.FCALL, fn, keys, args))
        .onSuccess(r -> link.meter().script(script.name(), link.ticker().nanos() - began))
        .recover(e -> unusable(link, e) ? run(link, sent(script), keys, args) : Future.failedFuture(e));
  }

  /** The same, answered once the replicas have its writes (see run with replicas). */
  Future<Response> call(RedisLink link, LuaScript script, List<String> keys, List<String> args, Replicas replicas) {
    String fn = function(link, script);
    if (fn == null) {
      return run(link, sent(script), keys, args, replicas);
    }
    long began = link.ticker().nanos();
    Request wait = Request.cmd(Command.WAIT).arg(replicas.count()).arg(replicas.timeout().toMillis());
    return link.batch(List.of(request(Command.FCALL, fn, keys, args), wait)).compose(
        replies -> replicated(link, script, replies, replicas, began),
        e -> unusable(link, e) ? run(link, sent(script), keys, args, replicas) : Future.failedFuture(e));
  }

  /** The function to call for the script, or null: not in the library, or the library not usable (then reloaded). */
  private String function(RedisLink link, LuaScript script) {
    String fn = library == null ? null : library.function(script.name());
    if (fn != null && !library.usable()) {
      reload(link);
      return null;
    }
    return fn;
  }

  /**
   * Whether a call's failure says the library is missing or FCALL may not be called (an ACL, a renamed command):
   * the library is then marked unusable. Both are refused before anything runs, so making the call again as its
   * script cannot do a write twice; an error from inside the function (a refused key, an OOM) is the call's own.
   */
  private boolean unusable(RedisLink link, Throwable e) {
    String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(java.util.Locale.ROOT);
    if (!(m.contains("function not found") || m.contains("'fcall'"))) {
      return false;
    }
    library.usable(false);
    reload(link);
    return true;
  }

  /** Loads the library again, at most once a second (without REPLACE, a master that has it answers at once). */
  private void reload(RedisLink link) {
    if (library.reloadDue(link.ticker().nanos())) {
      load(link);
    }
  }

  /** Runs a script by SHA; if this Redis lacks it (restart, failover, another cluster master), by its source. */
  public static Future<Response> run(RedisLink link, LuaScript script, List<String> keys, List<String> args) {
    long began = link.ticker().nanos();
    return link.send(request(Command.EVALSHA, script.sha(), keys, args))
        .recover(e -> isNoScript(e)
            ? link.send(request(Command.EVAL, script.source(), keys, args))
            : Future.failedFuture(e))
        .onSuccess(r -> link.meter().script(script.name(), link.ticker().nanos() - began));
  }

  /**
   * Runs a script and then WAIT on the same connection (in a Redis Cluster, on the master of the script's
   * slot); fails with RedisUnavailable when fewer replicas than asked have its writes in time.
   */
  static Future<Response> run(RedisLink link, LuaScript script, List<String> keys, List<String> args,
                              Replicas replicas) {
    long began = link.ticker().nanos();
    Request wait = Request.cmd(Command.WAIT).arg(replicas.count()).arg(replicas.timeout().toMillis());
    return link.batch(List.of(request(Command.EVALSHA, script.sha(), keys, args), wait))
        .recover(e -> isNoScript(e)
            ? link.batch(List.of(request(Command.EVAL, script.source(), keys, args), wait))
            : Future.failedFuture(e))
        .compose(replies -> replicated(link, script, replies, replicas, began));
  }

  /** A script's reply and its WAIT's: fails with RedisUnavailable when fewer replicas than asked have its writes. */
  private static Future<Response> replicated(RedisLink link, LuaScript script, List<Response> replies, Replicas replicas,
                                             long began) {
    int acked = replies.get(1).toInteger();
    if (acked < replicas.count()) {
      return Future.failedFuture(new RedisUnavailable.NotReplicated("written on the Redis master, but " + acked + " of "
          + replicas.count() + " replicas had it within " + replicas.timeout().toMillis()
          + " ms (redis.waitReplicas); a failover now could drop it"));
    }
    link.meter().script(script.name(), link.ticker().nanos() - began);
    return Future.succeededFuture(replies.get(0));
  }

  /** One array of the request's arguments: the client's list of them grows from 3 an argument at a time otherwise. */
  private static Request request(Command cmd, String script, List<String> keys, List<String> args) {
    Object[] all = new Object[2 + keys.size() + args.size()];
    all[0] = script;
    all[1] = keys.size();
    int i = 2;
    for (String k : keys) {
      all[i++] = k;
    }
    for (String a : args) {
      all[i++] = a;
    }
    return Request.cmd(cmd, all);
  }

  private static boolean isNoScript(Throwable e) {
    String m = e.getMessage();
    return m != null && (m.startsWith("NOSCRIPT") || m.contains("] NOSCRIPT")); // a batch's: "ERR [0] NOSCRIPT …"
  }
}
