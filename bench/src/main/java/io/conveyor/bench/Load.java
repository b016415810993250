package io.conveyor.bench;

import io.conveyor.domain.Transactions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

/**
 * Starts the transactions through the same API every interface uses. With a rate, at a steady pace: each
 * tick starts whatever is due since the first start, so a late timer catches up instead of drifting.
 * Without one, as fast as possible but with at most `concurrency` starts awaiting their reply, so the
 * client does not queue unbounded work on its own Redis connection.
 */
final class Load {
  private final Vertx vertx;
  private final Transactions transactions;
  private final Tracker tracker;
  private final BenchOptions options;
  private int next;
  private int awaitingReply;
  private long firstNanos;
  private boolean toldRefusal;

  private final String webhook;

  Load(Vertx vertx, Transactions transactions, Tracker tracker, BenchOptions options) {
    this(vertx, transactions, tracker, options, null);
  }

  /** With a webhook URL on every transaction (the webhook benchmark). */
  Load(Vertx vertx, Transactions transactions, Tracker tracker, BenchOptions options, String webhook) {
    this.webhook = webhook;
    this.vertx = vertx;
    this.transactions = transactions;
    this.tracker = tracker;
    this.options = options;
  }

  /** Begins starting; progress is seen through the tracker. Call on the bench's context. */
  void begin() {
    firstNanos = System.nanoTime();
    if (options.rate() > 0) {
      tick();
    } else {
      fill();
    }
  }

  private void fill() {
    while (awaitingReply < options.concurrency() && next < options.transactions()) {
      startOne(next++);
    }
  }

  private void tick() {
    double elapsed = (System.nanoTime() - firstNanos) / 1e9;
    long due = Math.min(options.transactions(), 1 + (long) (elapsed * options.rate()));
    while (next < due) {
      startOne(next++);
    }
    if (next < options.transactions()) {
      // a timer re-armed after each tick; 1 ms is the finest Vert.x offers and keeps bursts to a few starts
      long gapMs = Math.max(1, (long) (1000 / options.rate() / 2));
      vertx.setTimer(gapMs, t -> tick());
    }
  }

  private void startOne(int n) {
    JsonObject body = new JsonObject().put("type", options.pipeline()).put("owner", "bench")
        .put("input", new JsonObject().put("n", n));
    if (webhook != null) {
      body.put("webhook", webhook);
    }
    awaitingReply++;
    long startNanos = System.nanoTime();
    tracker.issued(startNanos);
    transactions.start(body).onComplete(ar -> {
      awaitingReply--;
      if (ar.succeeded()) {
        tracker.replied(ar.result().txId(), startNanos);
      } else {
        tracker.refused();
        if (!toldRefusal) {
          // the first reason is the useful one (unknown pipeline, Redis down); the rest would repeat it
          toldRefusal = true;
          System.err.println("bench: a start was refused: " + ar.cause().getMessage());
        }
      }
      if (options.rate() == 0) {
        fill();
      }
    });
  }
}
