package io.conveyor.redis;

import io.vertx.redis.client.Response;

/**
 * The codes the Lua scripts answer with: lua/lib/codes.lua holds the same table (a test keeps them equal).
 * Each script's header says which it answers and what they mean for it.
 */
public enum Code {
  /** Done as asked. */
  OK,
  /** No such transaction (or another owner's, for a client's request). Nothing written. */
  NOT_FOUND,
  /** The caller no longer owns the transaction: a later attempt does, or it is not processing. Nothing written. */
  FENCED,
  /** Cancelled now (cancel, webhook-cancel), or its owner asked to cancel it (checkpoint). */
  CANCELLED,
  /** Not a final status (a bug in the caller). */
  BAD_STATUS,
  /** A transaction with this txId exists already. */
  DUPLICATE_TX,
  /** No pipeline of that name. */
  UNKNOWN_TYPE,
  /** The pipeline is not a transaction type. */
  NOT_STARTABLE,
  /** The pipeline belongs to another group than the caller expected: call again with that group's keys. */
  GROUP_CHANGED,
  /** The owner used this externalId within its uniqueness period. */
  DUPLICATE_EXTERNAL_ID,
  /** A child pipeline of that name does not exist. */
  UNKNOWN_PIPELINE,
  /** The transaction is running: it ends cancelled at its next step boundary. */
  CANCEL_REQUESTED,
  /** The transaction has ended already. */
  ALREADY_FINAL,
  /** A switch was set. */
  SET,
  /** The transaction sleeps off every worker until its time or its switch. */
  SLEEPING,
  /** The awaited switch had changed already: queued again at once instead of sleeping. */
  REQUEUED,
  /** A webhook delivery attempt has begun: it cannot be cancelled any more. */
  TOO_LATE,
  /** No webhook delivery is waiting. */
  NOT_PENDING,
  /** A heartbeat came after the last one had expired; no node had taken this one over meanwhile. */
  LATE,
  /** A rerun of a transaction that runs, or that ended success or aborted. */
  NOT_RERUNNABLE,
  /** A rerun from the failed step of a transaction whose failed step's input was not kept. */
  NO_STEP_INPUT,
  /** put-pipeline: a newer publication is current and stays so. */
  KEPT,
  /** start: the pipeline is disabled and takes no new starts. */
  DISABLED,
  /** start: the owner has its share of maxLive live in the partition already (detail: limit:share). */
  LIVE_LIMIT,
  /** hop, fork: a child or branch would nest deeper than limits.maxDepth below its root. Nothing written. */
  DEPTH_EXCEEDED,
  /** hop, fork: the root's tree would hold more than limits.maxDescendants transactions. Nothing written. */
  DESCENDANTS_EXCEEDED,
  /** event-send, event-wait: the event was given to waiters (to this waiter). */
  DELIVERED,
  /** event-wait: registered as a waiter of its event key. */
  WAITING,
  /** event-wait: the step's time is up and no event came. */
  TIMED_OUT,
  /** event-send: no waiter, and a pipeline starts on the event (startOn). */
  START,
  /** event-send: an event of that id was recorded within the retention; nothing written. */
  DUPLICATE,
  /** start: a debounce gate's transaction waits to start; its input and metadata are this start's now (its txId). */
  DEBOUNCED,
  /** start: a throttle gate that refuses has had its limit of starts in the period (when a slot frees, ms). */
  THROTTLED,
  /** start: a singleton gate that refuses has a live transaction (its txId). */
  GATE_BUSY,
  /** checkpoint: the transaction is paused: the step's result is kept and it has left the node (pause.lua). */
  PAUSED,
  /** resume: the transaction is not paused; nothing written. */
  NOT_PAUSED,
  /** checkpoint: the transaction was marked to migrate (migrate.lua): its next step is its new version's, queued. */
  MIGRATED,
  /** put-pipeline: a rollout that cannot be (no version current, another group, not startable); nothing written. */
  ROLLOUT_REFUSED,
  /** rollout: the pipeline has no rollout under way (its last one's state); nothing written. */
  NO_ROLLOUT;

  /** The code of a reply that is a code, or a list that starts with one. */
  public static Code of(Response reply) {
    return valueOf((reply.type() == io.vertx.redis.client.ResponseType.MULTI ? reply.get(0) : reply).toString());
  }
}
