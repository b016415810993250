package io.conveyor.redis;

import java.util.Set;

/**
 * The first line each script is sent with on Redis 7 and later, where a script may declare flags (Redis 6.x has
 * none: there every script is sent as it is written). A flagged script is judged before it runs: above
 * maxmemory, one without allow-oom is refused whole (OOM, nothing written), so a start never half-happens at
 * the wall. allow-oom goes to the scripts that only finish, cancel, archive, free, read, beat or hold leases:
 * the work already admitted completes and frees memory. A script not named here is refused at the wall, the safe
 * side for a new one. docs/decisions.md says what else a flag changes (keys must be declared and in one slot).
 */
final class ScriptFlags {
  /** Scripts that run above maxmemory: their writes are small, or they are what frees memory. */
  static final Set<String> ALLOW_OOM = Set.of("dequeue", "checkpoint", "complete", "get-state", "requeue",
      "group-state", "pipeline-state", "schedule-due", "schedule-done", "cancel", "lease", "heartbeat", "reap", "judge",
      "lease-break", "sleep", "retry", "set-switch", "wake", "archive", "webhook", "webhook-cancel", "progress",
      "sample", "stats-read", "stats-add", "search", "ring", "trim", "memory", "archive-quarantine", "archive-retry",
      "archive-drop", "cancel-walk", "stuck", "event-wait", "event-return", "pause", "resume", "migrate",
      "rollout", "rollout-event", "admin-event");

  private ScriptFlags() {
  }

  /** The shebang line a script is sent with on a Redis that has script flags. */
  static String shebang(String script) {
    return ALLOW_OOM.contains(script) ? "#!lua flags=allow-oom" : "#!lua";
  }

  /** Whether a server of this version (INFO server's redis_version, e.g. 7.0.15) takes script flags. */
  static boolean supported(String version) {
    try {
      return Integer.parseInt(version.trim().split("\\.")[0]) >= 7;
    } catch (NumberFormatException e) {
      return false;
    }
  }
}
