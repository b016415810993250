package io.conveyor.redis;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

/** A batch split by partition: one script call per partition, the answers put back in the batch's order. */
final class Partitioned {
  private Partitioned() {
  }

  static <T, R> Future<List<R>> each(Keys keys, List<T> batch, Function<T, String> txIdOf,
                                     BiFunction<Integer, List<T>, Future<List<R>>> call) {
    Map<Integer, List<Integer>> byPartition = new LinkedHashMap<>();
    for (int i = 0; i < batch.size(); i++) {
      byPartition.computeIfAbsent(keys.partitionOf(txIdOf.apply(batch.get(i))), p -> new ArrayList<>()).add(i);
    }
    if (byPartition.size() == 1) {
      return call.apply(byPartition.keySet().iterator().next(), batch);
    }
    List<Integer> partitions = new ArrayList<>(byPartition.keySet());
    List<Future<List<R>>> calls = new ArrayList<>();
    for (int p : partitions) {
      calls.add(call.apply(p, byPartition.get(p).stream().map(batch::get).toList()));
    }
    return Future.join(calls).compose(all -> {
      for (Future<List<R>> f : calls) {
        if (f.failed()) {
          return Future.failedFuture(f.cause());
        }
      }
      List<R> out = new ArrayList<>(java.util.Collections.nCopies(batch.size(), null));
      for (int j = 0; j < partitions.size(); j++) {
        List<Integer> at = byPartition.get(partitions.get(j));
        List<R> answers = calls.get(j).result();
        for (int i = 0; i < at.size(); i++) {
          out.set(at.get(i), answers.get(i));
        }
      }
      return Future.succeededFuture(out);
    });
  }
}
