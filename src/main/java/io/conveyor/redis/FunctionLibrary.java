package io.conveyor.redis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The hot scripts as one Redis 7 function library (FUNCTION LOAD, then FCALL), so the helpers each includes are
 * made once per Redis and not on every call. Run as EVAL, a script's chunk first makes a closure of every helper its
 * includes define (complete.lua's includes define 59, of which it uses 21): that set-up, not the commands, was most
 * of a call's Redis CPU (docs/decisions.md). Here each script becomes a builder, run on the function's first call,
 * that makes the helpers once and answers the script's body as a function of KEYS and ARGV; later calls run only
 * the body. Lib state that lives for one call (queue.lua's queue_fair) is reset at the body's start.
 *
 * <p>A script's includes must come first, before any code (its header comments aside), since what comes before
 * the last include runs once, not per call. Its body may use at most 60 of the helpers (Lua 5.1's upvalue limit):
 * FUNCTION LOAD refuses it otherwise (FunctionLibraryTest loads the library in the suite; a node that cannot load it
 * says so and runs the scripts as scripts). The library is named by a hash of its whole source, flags included, as
 * are its functions, so two versions of the node share a Redis during a rolling upgrade, each calling its own, and
 * a library of that name already there is this one.
 */
final class FunctionLibrary {
  /** The scripts on the path every transaction takes. */
  static final Set<String> HOT = Set.of("start", "dequeue", "checkpoint", "complete", "sleep", "wake", "retry",
      "set-switch", "hop", "fork", "heartbeat", "ring", "get-state", "requeue");
  /** Per include, what resets its one-call state at each call's start. */
  private static final Map<String, String> RESETS = Map.of("queue", "queue_fair = {}");
  private static final String INCLUDE = "-- #include ";

  private final String name;
  private final String source;
  private final Map<String, String> functions;
  private final AtomicLong lastLoad = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong lastWarn = new AtomicLong(Long.MIN_VALUE);
  /** Whether the last load answered that Redis has it, and no call has said otherwise since. */
  private final java.util.concurrent.atomic.AtomicBoolean usable = new java.util.concurrent.atomic.AtomicBoolean();

  private FunctionLibrary(String name, String source, Map<String, String> functions) {
    this.name = name;
    this.source = source;
    this.functions = functions;
  }

  /** The library of the hot scripts among names. */
  static FunctionLibrary of(Iterable<String> names) {
    StringBuilder body = new StringBuilder();
    List<String> hot = new ArrayList<>();
    for (String n : names) {
      if (HOT.contains(n)) {
        hot.add(n);
      }
    }
    hot.sort(null);
    for (String n : hot) {
      body.append(builder(n));
    }
    StringBuilder registers = new StringBuilder();
    for (String n : hot) {
      String run = "run_" + n.replace('-', '_');
      registers.append("local ").append(run).append('\n')
          .append("redis.register_function{function_name='FN_").append(n.replace('-', '_'))
          .append("', callback=function(keys, args)\n")
          .append("  if not ").append(run).append(" then ").append(run).append(" = build_")
          .append(n.replace('-', '_')).append("() end\n")
          .append("  return ").append(run).append("(keys, args)\n")
          .append("end, flags={").append(ScriptFlags.ALLOW_OOM.contains(n) ? "'allow-oom'" : "").append("}}\n");
    }
    // the hash covers the builders and the registrations (flags too): a change of either is another library
    String hash = LuaScript.sha1(body + "\n" + registers).substring(0, 12);
    String lib = "conveyor_" + hash;
    Map<String, String> fns = new LinkedHashMap<>();
    for (String n : hot) {
      fns.put(n, "cv_" + hash + "_" + n.replace('-', '_'));
    }
    String src = "#!lua name=" + lib + "\n" + body + registers.toString().replace("'FN_", "'cv_" + hash + "_");
    return new FunctionLibrary(lib, src, Map.copyOf(fns));
  }

  /** "local function build_NAME() INCLUDES; return function(KEYS, ARGV) RESETS; BODY end end" for one script. */
  static String builder(String script) {
    String[] lines = read("/lua/" + script + ".lua").split("\n", -1);
    int last = -1;
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].startsWith(INCLUDE)) {
        last = i;
      }
    }
    StringBuilder out = new StringBuilder("local function build_").append(script.replace('-', '_')).append("()\n");
    StringBuilder resets = new StringBuilder();
    for (int i = 0; i <= last; i++) {
      String line = lines[i];
      if (line.startsWith(INCLUDE)) {
        String lib = line.substring(INCLUDE.length()).trim();
        out.append(read("/lua/lib/" + lib + ".lua")).append('\n');
        if (RESETS.containsKey(lib)) {
          resets.append("  ").append(RESETS.get(lib)).append('\n');
        }
      } else if (!line.isBlank() && !line.startsWith("--")) {
        throw new IllegalStateException(script + ".lua: code before its last include runs once as a function ("
            + line.trim() + "); put the includes first");
      }
    }
    out.append("return function(KEYS, ARGV)\n").append(resets);
    for (int i = last + 1; i < lines.length; i++) {
      out.append(lines[i]).append('\n');
    }
    return out.append("end\nend\n").toString();
  }

  private static String read(String path) {
    try (InputStream in = FunctionLibrary.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing script " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + path, e);
    }
  }

  String name() {
    return name;
  }

  String source() {
    return source;
  }

  /** The function a script is called by, or null when it is not in the library. */
  String function(String script) {
    return functions.get(script);
  }

  /** Whether calls go by FCALL: the library was loaded, and no call found it missing or refused since. */
  boolean usable() {
    return usable.get();
  }

  void usable(boolean now) {
    usable.set(now);
  }

  /** Whether to load the library again now (a Redis that lost it): at most once a second per node. */
  boolean reloadDue(long nowNanos) {
    return due(lastLoad, nowNanos, 1_000_000_000L);
  }

  /** Whether to log a failed reload now: at most once a minute (above maxmemory each reload fails until it is not). */
  boolean warnDue(long nowNanos) {
    return due(lastWarn, nowNanos, 60_000_000_000L);
  }

  private static boolean due(AtomicLong last, long nowNanos, long every) {
    long l = last.get();
    return (l == Long.MIN_VALUE || nowNanos - l >= every) && last.compareAndSet(l, nowNanos);
  }
}
