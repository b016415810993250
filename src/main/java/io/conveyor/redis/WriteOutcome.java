package io.conveyor.redis;

/** What a fenced write (checkpoint, complete) answered; the names are the scripts' reply codes. */
public enum WriteOutcome {
  /** Written. */
  OK,
  /** Refused: a later attempt owns the transaction, or it is no longer processing. Nothing was written. */
  FENCED,
  /** No such transaction. */
  NOT_FOUND,
  /** The status given is not a final one (a bug in the caller). */
  BAD_STATUS,
  /** Its owner asked to cancel it (checkpoint only): nothing was written; complete it cancelled. */
  CANCELLED
}
