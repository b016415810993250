package io.conveyor.domain;

import io.conveyor.model.Identifiers;
import io.conveyor.model.Strict;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.conveyor.model.TxSummary;
import io.conveyor.redis.PauseStore;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * Pause and resume one transaction (issue 34): it stops at its next step boundary and holds no worker or slot until
 * resumed, where it stood (pause.lua, resume.lua). With tree (the default) what it waits for, its children and
 * branches down the chain, follow it. Behind every interface (HTTP, event bus, bulk by search, the shell client).
 */
public final class Pauses {
  /** Transactions one script call looks at (the walk over a tree is bounded per call). */
  static final int PER_CALL = 100;
  /** Script calls one pause or resume makes at most: a tree beyond PER_CALL x MAX_CALLS is reached only in part. */
  static final int MAX_CALLS = 200;
  /** The longest reason kept with a pause. */
  public static final int MAX_REASON = 500;
  private static final Set<String> PAUSE_FIELDS = Set.of("reason", "tree");
  private static final Set<String> RESUME_FIELDS = Set.of("timers", "tree");

  private final PauseStore store;
  private final Transactions tx;

  public Pauses(PauseStore store, Transactions tx) {
    this.store = store;
    this.tx = tx;
  }

  /** A pause or resume as asked: reason (pause), skip (resume: timers skip), tree. */
  public record Ask(String reason, boolean skip, boolean tree) {
  }

  /** The body of a pause: {reason?: text of at most 500 characters, tree?: boolean (default true)}. */
  public static Ask pauseAsk(JsonObject body) {
    JsonObject b = body == null ? new JsonObject() : body;
    Strict.fields(b, PAUSE_FIELDS);
    Object reason = b.getValue("reason");
    if (reason != null && !(reason instanceof String)) {
      throw TxException.invalid("reason", "expected text");
    }
    String text = (String) reason;
    if (text != null && text.length() > MAX_REASON) {
      throw TxException.invalid("reason", "at most " + MAX_REASON + " characters, got " + text.length());
    }
    Identifiers.check("reason", text);
    return new Ask(text == null ? "" : text, false, tree(b));
  }

  /** The body of a resume: {timers?: "fire" (the default) or "skip", tree?: boolean (default true)}. */
  public static Ask resumeAsk(JsonObject body) {
    JsonObject b = body == null ? new JsonObject() : body;
    Strict.fields(b, RESUME_FIELDS);
    Object timers = b.getValue("timers", "fire");
    if (!"fire".equals(timers) && !"skip".equals(timers)) {
      throw TxException.invalid("timers", "expected fire (the default: timers that fell due while paused fire at "
          + "once) or skip (the time paused does not count), got " + timers);
    }
    return new Ask(null, "skip".equals(timers), tree(b));
  }

  private static boolean tree(JsonObject b) {
    Object tree = b.getValue("tree", true);
    if (!(tree instanceof Boolean t)) {
      throw TxException.invalid("tree", "expected true (the default: its children and branches follow) or false");
    }
    return t;
  }

  /** Pauses one of an owner's transactions; by names who asked. Pausing a paused one changes nothing (idempotent). */
  public Future<TxSummary> pause(String txId, String owner, String by, Ask ask) {
    TxException bad = Transactions.badReference(txId, owner);
    if (bad != null) {
      return Future.failedFuture(bad);
    }
    return store.pause(txId, owner, by, ask.reason(), ask.tree(), txId, PER_CALL)
        .compose(r -> outcome(txId, owner, r, "paused", left -> store.pause(left, owner, by, ask.reason(), true,
            txId, PER_CALL)))
        .recover(Transactions::asRefusal);
  }

  /** Resumes one of an owner's paused transactions where it stood; a resume of one not paused is refused 409. */
  public Future<TxSummary> resume(String txId, String owner, String by, Ask ask) {
    TxException bad = Transactions.badReference(txId, owner);
    if (bad != null) {
      return Future.failedFuture(bad);
    }
    return store.resume(txId, owner, by, ask.skip(), ask.tree(), txId, PER_CALL)
        .compose(r -> outcome(txId, owner, r, "resumed", left -> store.resume(left, owner, by, ask.skip(), true,
            txId, PER_CALL)))
        .recover(Transactions::asRefusal);
  }

  private Future<TxSummary> outcome(String txId, String owner, PauseStore.Reply r, String done,
                                    Function<String, Future<PauseStore.Reply>> again) {
    return switch (r.code()) {
      case OK -> rest(r.left(), again).compose(v -> tx.status(txId, owner));
      // Redis holds none: an archived one of this owner has ended (409); else there is none (404)
      case NOT_FOUND -> tx.status(txId, owner).compose(s -> Future.failedFuture(ended(txId, s.status().wire(), done)));
      case ALREADY_FINAL -> Future.failedFuture(ended(txId, r.detail(), done));
      case NOT_PAUSED -> Future.failedFuture(new TxException(Kind.NOT_PAUSED, "transaction " + txId
          + " is not paused (it is " + r.detail() + "); pause it first", null, txId));
      default -> Future.failedFuture(new IllegalStateException(done + ": unexpected reply " + r.code()));
    };
  }

  /** The rest of a tree the first call did not reach, a call at a time, at most MAX_CALLS calls. */
  private static Future<Void> rest(List<String> left, Function<String, Future<PauseStore.Reply>> again) {
    Deque<String> todo = new ArrayDeque<>(left);
    return next(todo, again, MAX_CALLS);
  }

  private static Future<Void> next(Deque<String> todo, Function<String, Future<PauseStore.Reply>> again,
                                   int calls) {
    if (todo.isEmpty() || calls <= 0) {
      return Future.succeededFuture();
    }
    return again.apply(todo.poll()).compose(r -> {
      todo.addAll(r.left());
      return next(todo, again, calls - 1);
    });
  }

  private static TxException ended(String txId, String status, String done) {
    return new TxException(Kind.ALREADY_FINAL, "transaction " + txId + " has ended already (" + status
        + "); only a running one can be " + done, null, txId);
  }
}
