package io.conveyor.bench.chaos;

import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * bench/pause's eventbus step, served on the driver's Vert.x: it counts every execution by txId, step and
 * stepAttempt, and behaves by the transaction's input kind: "retry" fails its first attempt of step 0 (retryable:
 * the retry policy puts it to sleep), "run" holds the reply of step 0 until {@link #release} (a step running at the
 * pause), anything else answers at once with its input.
 */
final class PauseSteps {
  static final String ADDRESS = "steps.pausebench";
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final AtomicLong total = new AtomicLong();
  private final AtomicBoolean released = new AtomicBoolean();
  private final List<Message<Object>> held = new ArrayList<>();
  private final Vertx vertx;

  PauseSteps(Vertx vertx) {
    this.vertx = vertx;
    vertx.eventBus().consumer(ADDRESS, this::serve).completion().await();
  }

  private void serve(Message<Object> m) {
    String tx = m.headers().get("txId");
    int step = Integer.parseInt(m.headers().get("step"));
    String stepAttempt = m.headers().get("stepAttempt");
    runs.computeIfAbsent(tx + "#" + step + "#" + stepAttempt, k -> new AtomicInteger()).incrementAndGet();
    total.incrementAndGet();
    JsonObject in = m.body() instanceof JsonObject j ? j : new JsonObject();
    String kind = in.getString("kind", "");
    if (step == 0 && kind.equals("retry") && "1".equals(stepAttempt)) {
      m.reply(new JsonObject().put("status", "failed").put("note", "bench/pause: the first attempt fails")
          .put("retryable", true));
    } else if (step == 0 && kind.equals("run") && !released.get()) {
      synchronized (held) {
        held.add(m);
      }
    } else {
      m.reply(new JsonObject().put("output", in));
    }
  }

  /** Replies to every held step (on the event loop's context) and answers the later ones at once. */
  int release() {
    released.set(true);
    List<Message<Object>> out;
    synchronized (held) {
      out = new ArrayList<>(held);
      held.clear();
    }
    vertx.runOnContext(v -> out.forEach(m -> m.reply(new JsonObject().put("output", m.body()))));
    return out.size();
  }

  int held() {
    synchronized (held) {
      return held.size();
    }
  }

  long total() {
    return total.get();
  }

  /** Executions beyond the first of one txId, step and stepAttempt: a step that ran twice. */
  long duplicates() {
    return runs.values().stream().mapToLong(c -> c.get() - 1).sum();
  }

  /** Executions of a given step, over every transaction and attempt. */
  long ofStep(int step) {
    return runs.entrySet().stream().filter(e -> e.getKey().split("#")[1].equals(Integer.toString(step)))
        .mapToLong(e -> e.getValue().get()).sum();
  }
}
