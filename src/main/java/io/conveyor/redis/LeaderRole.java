package io.conveyor.redis;

/** The leader-only roles and the name their two lease keys start with (<name>Lock1, <name>Lock2). */
public enum LeaderRole {
  REAPER("reaper"),
  ARCHIVE("toArchive"),
  WEBHOOKS("webhook"),
  SCHEDULER("schedule");

  /** The start of the lease keys' names, as DESIGN.md names them. */
  public final String keyName;

  LeaderRole(String keyName) {
    this.keyName = keyName;
  }
}
