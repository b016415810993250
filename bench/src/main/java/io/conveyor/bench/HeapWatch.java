package io.conveyor.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.ListenerNotFoundException;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The most heap any collection left in use while it watched: the live set at the worst moment of a run
 * (e.g. with thousands of transactions queued), learnt from GC notifications, so it needs no forced GC
 * that would stall the run it measures.
 */
final class HeapWatch implements AutoCloseable {
  private final AtomicLong peakAfterGc = new AtomicLong();
  private final AtomicLong lastAfterGc = new AtomicLong();
  private final Set<String> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
      .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).collect(Collectors.toSet());
  private final List<NotificationEmitter> emitters = new ArrayList<>();
  private final NotificationListener listener = (notification, handback) -> {
    if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
      GarbageCollectionNotificationInfo info =
          GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
      long used = info.getGcInfo().getMemoryUsageAfterGc().entrySet().stream()
          .filter(e -> heapPools.contains(e.getKey())).mapToLong(e -> e.getValue().getUsed()).sum();
      peakAfterGc.accumulateAndGet(used, Math::max);
      lastAfterGc.set(used);
    }
  };

  HeapWatch() {
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof NotificationEmitter emitter) {
        emitter.addNotificationListener(listener, null, null);
        emitters.add(emitter);
      }
    }
  }

  /** Heap bytes in use after the latest collection; 0 if none ran. */
  long lastAfterGc() {
    return lastAfterGc.get();
  }

  /** Heap bytes in use after the fullest collection seen; 0 if none ran. */
  long peakAfterGc() {
    return peakAfterGc.get();
  }

  @Override
  public void close() {
    for (NotificationEmitter e : emitters) {
      try {
        e.removeNotificationListener(listener);
      } catch (ListenerNotFoundException ignored) {
        // already gone; nothing to undo
      }
    }
  }
}
