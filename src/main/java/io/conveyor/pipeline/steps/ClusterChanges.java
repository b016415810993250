package io.conveyor.pipeline.steps;

import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

/**
 * What an eventbus step asks when its request got no answer in time: did the node's cluster view change while
 * the request was out (a member left, joined or merged back, a node went silent)? Then the answer most likely
 * had nowhere to go, and the step is tried again instead of timing out. A node answers it from its view of
 * Hazelcast and Redis (lease/ClusterView); pipeline/ owns the question so it depends on nothing but model.
 */
public interface ClusterChanges {
  /** Until a node gives its view (StepRegistry.clusterChanges, at start): nothing ever changes. */
  ClusterChanges NONE = of(() -> 0, mark -> false);

  /** A mark of now, to pass to changedSince later. */
  long now();

  /** Whether the view changed since the mark, or is changing now. */
  boolean changedSince(long mark);

  static ClusterChanges of(LongSupplier now, LongPredicate changedSince) {
    return new ClusterChanges() {
      @Override
      public long now() {
        return now.getAsLong();
      }

      @Override
      public boolean changedSince(long mark) {
        return changedSince.test(mark);
      }
    };
  }
}
