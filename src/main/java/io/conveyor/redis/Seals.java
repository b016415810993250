package io.conveyor.redis;

import io.conveyor.crypto.Payloads;
import io.conveyor.model.Dequeued;
import io.conveyor.model.StartRequest;
import io.conveyor.model.TxSummary;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the stores seal an owner's payloads on their way into Redis and open them on their way out (crypto.Payloads
 * decides for whom): what a step is given, a completion, a child's or branch's input, a summary read.
 */
final class Seals {
  private Seals() {
  }

  /** Each completion with its output, note and error's message sealed for its owner. */
  static Future<List<RunStore.Completion>> completions(Payloads p, List<RunStore.Completion> txs) {
    if (txs.stream().noneMatch(c -> c.owner() != null && p.sealsFor(c.owner()))) {
      return Future.succeededFuture(txs);
    }
    List<Future<RunStore.Completion>> each = new ArrayList<>(txs.size());
    for (RunStore.Completion c : txs) {
      Future<JsonObject> output = p.seal(c.owner(), c.txId(), "output", c.output());
      Future<String> note = p.seal(c.owner(), c.txId(), "note", c.note());
      Future<JsonObject> error = p.sealError(c.owner(), c.txId(), c.error());
      each.add(Future.all(output, note, error).map(v -> new RunStore.Completion(c.txId(), c.attempt(), c.status(),
          output.result(), note.result(), c.stepTime(), error.result(), c.owner())));
    }
    return Future.all(each).map(v -> each.stream().map(Future::result).toList());
  }

  /** Each start with its metadata and input sealed for its owner (what start.lua stores; Java keeps the clear). */
  static Future<List<QueueStore.NewTx>> starts(Payloads p, List<QueueStore.NewTx> txs) {
    List<Future<QueueStore.NewTx>> each = new ArrayList<>(txs.size());
    for (QueueStore.NewTx t : txs) {
      StartRequest q = t.req();
      Future<JsonObject> metadata = p.seal(q.owner(), t.txId(), "metadata", q.metadata());
      Future<JsonObject> input = p.seal(q.owner(), t.txId(), "input", q.input());
      each.add(Future.all(metadata, input).map(v -> new QueueStore.NewTx(t.txId(), new StartRequest(q.type(),
          q.owner(), q.externalId(), q.metadata(), q.input(), p.sealsFor(q.owner()) ? metadata.result().encode()
          : q.metadataJson(), p.sealsFor(q.owner()) ? input.result().encode() : q.inputJson(), q.webhook(),
          q.startAt(), q.delay(), q.priority()), t.group(), t.webhookDelay(), t.trace(), t.share(), t.gate(),
          t.pipelineGate())));
    }
    return Future.all(each).map(v -> each.stream().map(Future::result).toList());
  }

  /** Each branch with its input sealed for the owner, bound to the branch's own txId. */
  static Future<List<RunStore.Branch>> branches(Payloads p, String owner, List<RunStore.Branch> branches) {
    if (owner == null || !p.sealsFor(owner)) {
      return Future.succeededFuture(branches);
    }
    List<Future<RunStore.Branch>> each = new ArrayList<>(branches.size());
    for (RunStore.Branch b : branches) {
      each.add(p.seal(owner, b.txId(), "input", b.input())
          .map(in -> new RunStore.Branch(b.txId(), b.pipeline(), in, b.group())));
    }
    return Future.all(each).map(v -> each.stream().map(Future::result).toList());
  }

  /**
   * A dequeued transaction with what its step is given opened: its input, metadata and its child's output. One
   * that does not open (its owner's key shredded) is unreadable, so the node ends it instead of running a step on
   * an envelope; a failure to read the key (Redis) fails, and the runner tries again.
   */
  static Future<Dequeued> opened(Payloads p, Dequeued tx) {
    Dequeued.ChildResult child = tx.child();
    if (tx.unreadable() != null || !sealedIn(tx.stepInput()) && !Payloads.isEnvelope(tx.metadata())
        && (child == null || child.output() == null)) {
      return Future.succeededFuture(tx);
    }
    Future<JsonObject> input = p.openAll(tx.owner(), tx.txId(), "input", tx.stepInput())
        .compose(in -> compensation(p, tx.owner(), in));
    Future<JsonObject> metadata = p.open(tx.owner(), tx.txId(), "metadata", tx.metadata());
    Future<JsonObject> output = child == null ? Future.succeededFuture()
        : p.openAll(tx.owner(), tx.txId(), "output", child.output());
    return Future.all(input, metadata, output).map(v -> new Dequeued(tx.txId(), tx.attempt(), tx.type(),
            tx.version(), tx.step(), input.result(), tx.owner(), tx.externalId(), metadata.result(), tx.created(),
            tx.queue(), child == null ? null : new Dequeued.ChildResult(child.status(), output.result(), child.note()),
            tx.retry(), tx.switches(), tx.stepAttempt(), tx.trace(), tx.run(), tx.takenOver(), null))
        .recover(e -> e instanceof io.conveyor.crypto.SealedException
            ? Future.succeededFuture(Dequeued.unreadable(tx.txId(), tx.attempt(), "its payload is sealed and does not "
                + "open (" + e.getMessage() + ")"))
            : Future.failedFuture(e)); // Redis did not answer (the data key's read): the caller tries again
  }

  /** Whether a step input holds anything sealed, at any depth (a compensation's holds its transaction's). */
  private static boolean sealedIn(JsonObject input) {
    if (input == null) {
      return false;
    }
    Boolean in = io.conveyor.model.JsonWalk.anyTextContains(input, "sealed:v1:"); // walked, not encoded
    return in != null ? in : input.encode().contains("sealed:v1:");
  }

  /**
   * A compensation's input (lib/compensate.lua: {txId, note, input, stepInput, errors, …} of the transaction it
   * compensates) with that transaction's note and errors' messages opened; its envelopes were opened already.
   */
  private static Future<JsonObject> compensation(Payloads p, String owner, JsonObject in) {
    if (in == null || !(in.getValue("txId") instanceof String of) || !(in.getValue("errors") instanceof
        io.vertx.core.json.JsonArray errors)) {
      return Future.succeededFuture(in);
    }
    Future<String> note = p.open(owner, of, "note", in.getString("note"));
    Future<io.vertx.core.json.JsonArray> opened = p.openErrors(owner, of, errors);
    return Future.all(note, opened).map(v -> in.copy().put("note", note.result()).put("errors", opened.result()));
  }

  /**
   * A summary with its metadata, output, note and errors' messages opened; what does not open (its key shredded)
   * stays sealed, and the summary shows "sealed": true (model/SealedView). Redis failing to give a key fails the read.
   */
  static Future<TxSummary> opened(Payloads p, TxSummary s) {
    if (s == null) {
      return Future.succeededFuture();
    }
    String o = s.owner();
    String id = s.txId();
    Future<JsonObject> metadata = Payloads.orSealed(p.open(o, id, "metadata", s.metadata()), s.metadata());
    Future<JsonObject> output = Payloads.orSealed(p.open(o, id, "output", s.output()), s.output());
    Future<String> note = Payloads.orSealed(p.open(o, id, "note", s.note()), s.note());
    Future<io.vertx.core.json.JsonArray> errors = p.openErrors(o, id, s.errors());
    Future<JsonObject> retry = s.retry() == null || !(s.retry().getValue("lastError") instanceof JsonObject last)
        ? Future.succeededFuture(s.retry())
        : p.openErrors(o, id, new io.vertx.core.json.JsonArray().add(last))
            .map(a -> s.retry().copy().put("lastError", a.getJsonObject(0)));
    Future<io.vertx.core.json.JsonArray> runs = runs(p, o, id, s.runs());
    return Future.all(List.of(metadata, output, note, errors, retry, runs)).map(v -> new TxSummary(id, o,
        s.externalId(), s.type(), s.status(), s.processingState(), s.attempt(), s.created(), s.updated(),
        s.completed(), metadata.result(), output.result(), note.result(), s.progressReport(), s.webhook(),
        retry.result(), errors.result(), runs.result(), s.compensation(), s.startAt(), s.gate(), s.paused()));
  }

  /** Earlier runs (reruns) with their notes opened: each was sealed as the transaction's note when that run ended. */
  private static Future<io.vertx.core.json.JsonArray> runs(Payloads p, String owner, String txId,
                                                          io.vertx.core.json.JsonArray runs) {
    if (runs == null || runs.isEmpty()) {
      return Future.succeededFuture(runs);
    }
    io.vertx.core.json.JsonArray out = runs.copy();
    List<Future<?>> each = new ArrayList<>();
    for (Object r : out) {
      if (r instanceof JsonObject run && run.getValue("note") instanceof String n) {
        each.add(Payloads.orSealed(p.open(owner, txId, "note", n), n).onSuccess(t -> run.put("note", t)));
      }
    }
    return Future.all(each).map(v -> out);
  }

  /** The fields of a state as Redis holds them, with input, data, metadata and output opened where they can be. */
  static Future<JsonObject> openedFields(Payloads p, String txId, JsonObject fields) {
    if (fields == null) {
      return Future.succeededFuture();
    }
    String owner = fields.getString("owner");
    List<Future<?>> each = new ArrayList<>();
    JsonObject out = fields.copy();
    for (String[] f : new String[][] {{"input", "input"}, {"data", "input"}, {"metadata", "metadata"},
        {"output", "output"}, {"childOutput", "output"}}) {
      if (fields.getValue(f[0]) == null) {
        continue; // absent stays absent: a reader's getString(field, fallback) must still fall back
      }
      each.add(Payloads.orSealed(p.openJson(owner, txId, f[1], fields.getString(f[0])), fields.getString(f[0]))
          .onSuccess(v -> out.put(f[0], v)));
    }
    return Future.all(each).map(v -> out);
  }
}
