package io.conveyor.bus;

/**
 * Every event-bus address Conveyor answers on or publishes to; docs/event-bus.md lists each with its
 * payload. Commands are conveyor.<noun>.<verb> (request/reply); facts are conveyor.<noun>.<past tense>
 * (published). Payloads are JSON objects; the facts are the records of this package, mapped by Messages.
 * A request to the event-bus API carries an API key in its apiKey header, and the owner comes from the key.
 */
public final class Addresses {
  /** Fact: an owner's data key was shredded (body: the owner); every node's caches drop it (crypto.Encryption). */
  public static final String DATA_KEY_SHREDDED = io.conveyor.crypto.Encryption.SHREDDED;
  /** Start a transaction: {type, owner, externalId?, metadata?, input?} → its summary. */
  public static final String TX_START = "conveyor.tx.start";
  /** Read a transaction: {txId, owner} → its summary; another owner's txId is not found, like an unknown one. */
  public static final String TX_STATUS = "conveyor.tx.status";
  /**
   * Cancel a transaction: {txId, owner} → its summary (cancelled, or still running when it will stop at its
   * next step boundary); an ended one fails 409 already-final.
   */
  public static final String TX_CANCEL = "conveyor.tx.cancel";
  /**
   * Run an ended transaction again: {txId, owner, from?} → its summary (running); from is failed (the step
   * that failed, the default) or start. One that runs or succeeded fails 409 not-rerunnable.
   */
  public static final String TX_RETRY = "conveyor.tx.retry";
  /**
   * Pause a transaction at its next step boundary: {txId, owner, reason?, tree?} → its summary (with paused);
   * an ended one fails 409 already-final, a paused one answers as it is (see PauseRoutes).
   */
  public static final String TX_PAUSE = "conveyor.tx.pause";
  /** Resume a paused transaction: {txId, owner, timers? (fire or skip), tree?} → its summary; 409 not-paused. */
  public static final String TX_RESUME = "conveyor.tx.resume";
  /** Set a switch: {txId, owner, name, value} → the summary; a transaction sleeping on it wakes at once. */
  public static final String TX_SWITCH = "conveyor.tx.switch";
  /**
   * Send a business event: {owner, name, key, payload?, id?, deliver?} → {id, outcome, woken, txId?}; it wakes the
   * owner's flow/await steps waiting for that name and key, or starts a startOn pipeline, or is kept.
   */
  public static final String EVENT_SEND = "conveyor.event.send";
  /**
   * Command, local only: a flow/await step begins or ends its wait ({owner, name, key, waiter, timeoutMs,
   * ending}) → {code, id?, payload?}; answered by the node's AwaitVerticle, which owns the Redis context.
   */
  public static final String EVENT_AWAIT = "conveyor.event.await";

  /** Fact, published on each node (local only) when any transaction completes: TxCompleted. */
  public static final String TX_COMPLETED = "conveyor.tx.completed";
  /**
   * Fact, published on each node (local only) for every operational event any node records (eventsL), in the
   * one shape {time, kind, node, subject, details}: each node reads the events of every partition each second.
   */
  public static final String EVENTS = "conveyor.events";
  /** Fact, published cluster-wide by the reaper leader when it took a dead node's work over: NodeDied. */
  public static final String NODE_DIED = "conveyor.node.died";
  /** Fact, published cluster-wide by a node that began or stopped leading a role: LeaseChanged. */
  public static final String LEASE_CHANGED = "conveyor.lease.changed";
  /** Hint, local only: a webhook became due (the body is its id); wakes this node's webhook leader. */
  public static final String WEBHOOKS_DUE = "conveyor.webhooks.due";
  /**
   * Hint, local only: the owner of a running transaction asked to cancel it (the body is its txId); the
   * node running it lets its step see ctx.cancelled(). The cancel itself is Redis's (cancel.lua).
   */
  public static final String TX_CANCEL_REQUESTED = "conveyor.tx.cancel-requested";
  /**
   * Hint, local only: partition p's notify subscription is in place again after it was lost (a failover, a dropped
   * connection; the body is p, an Integer). A completion published there meanwhile was not heard, so each wait of
   * this node for a transaction of p (a long-poll) reads its status again and answers if it ended.
   */
  public static final String NOTIFY_RESUBSCRIBED = "conveyor.notify.resubscribed";
  /** Hint, local only: Hazelcast saw a member leave (MemberLeft); the reaper looks at once. Never a verdict. */
  public static final String MEMBER_LEFT = "conveyor.cluster.member-left";
  /**
   * Command, local only: the node was taken over (its heartbeat answered FENCED). The dequeue verticle stops
   * taking work, puts back what the node holds but does not run, and replies the count; then the node registers again.
   */
  public static final String NODE_FENCE = "conveyor.node.fence";
  /** Fact, local only: the node is registered again after a fence; the dequeue verticle takes work again. */
  public static final String NODE_REGISTERED = "conveyor.node.registered";

  /**
   * Fact, local only: the node's memory watcher judged each partition's Redis (MemoryJudged), after every check
   * (redis.memoryCheckInterval); every start path of the node keeps the last one and refuses starts by it.
   */
  public static final String REDIS_MEMORY_JUDGED = "conveyor.redis-memory.judged";

  /** The facts and hints, for docs and the bridge: every address a client may listen to. */
  public static final java.util.List<String> PUBLISHED = java.util.List.of(TX_COMPLETED, NODE_DIED, LEASE_CHANGED,
      EVENTS);

  /** Published on each node (local only) when one of this owner's transactions completes: TxCompleted. */
  public static String completedFor(String owner) {
    return TX_COMPLETED + "." + owner;
  }

  private Addresses() {
  }
}
