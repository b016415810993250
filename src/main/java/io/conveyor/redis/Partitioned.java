package io.conveyor.redis;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A batch split by partition: one script call per partition, each item answered on its own, in the batch's
 * order. An item of a partition whose call failed fails with that partition's error; the others are answered as
 * soon as their own partition answers, never later for another partition's sake.
 */
final class Partitioned {
  private Partitioned() {
  }

  static <T, R> List<Future<R>> each(Keys keys, List<T> batch, Function<T, String> txIdOf,
                                     BiFunction<Integer, List<T>, Future<List<R>>> call) {
    Map<Integer, List<Integer>> byPartition = new LinkedHashMap<>();
    for (int i = 0; i < batch.size(); i++) {
      byPartition.computeIfAbsent(keys.partitionOf(txIdOf.apply(batch.get(i))), p -> new ArrayList<>()).add(i);
    }
    List<Future<R>> out = new ArrayList<>(Collections.nCopies(batch.size(), null));
    byPartition.forEach((p, at) -> {
      Future<List<R>> answered;
      try {
        answered = call.apply(p, byPartition.size() == 1 ? batch : at.stream().map(batch::get).toList());
      } catch (RuntimeException e) { // a call that could not be made fails its own items only
        answered = Future.failedFuture(e);
      }
      List<Future<R>> mine = spread(answered, at.size());
      for (int i = 0; i < at.size(); i++) {
        out.set(at.get(i), mine.get(i));
      }
    });
    return out;
  }

  /** One call's answer list as one Future per item (n of them); a short answer fails the items it lacks. */
  static <R> List<Future<R>> spread(Future<List<R>> answered, int n) {
    List<Future<R>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int at = i;
      out.add(answered.compose(all -> at < all.size() ? Future.succeededFuture(all.get(at))
          : Future.failedFuture(new IllegalStateException("the batch answered " + all.size() + " of " + n))));
    }
    return out;
  }

  /** Per-item answers that follow a step done for the whole batch first (sealing): it failing fails every item. */
  static <T, R> List<Future<R>> after(Future<List<T>> prepared, int n, Function<List<T>, List<Future<R>>> then) {
    Future<List<Future<R>>> each = prepared.map(then);
    List<Future<R>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int at = i;
      out.add(each.compose(all -> all.get(at)));
    }
    return out;
  }

  /** All answers as one list, failing with the first failure in the batch's order (callers that want the whole). */
  static <R> Future<List<R>> all(List<Future<R>> each) {
    return Future.join(each).transform(ar -> {
      List<R> out = new ArrayList<>(each.size());
      for (Future<R> f : each) {
        if (f.failed()) {
          return Future.failedFuture(f.cause());
        }
        out.add(f.result());
      }
      return Future.succeededFuture(out);
    });
  }
}
