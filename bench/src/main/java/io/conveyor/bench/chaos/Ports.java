package io.conveyor.bench.chaos;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/** Free TCP ports on 127.0.0.1, never fixed ones. */
final class Ports {
  private static final Set<Integer> GIVEN = new HashSet<>();

  private Ports() {
  }

  /**
   * A free port outside the ephemeral range (a kernel-picked port can be taken by an outgoing connection before the
   * server binds it), never handed out twice.
   */
  static int free() {
    return freeRange(1);
  }

  /** The first of n consecutive free ports, away from Hazelcast's default 5701 range and the ephemeral range. */
  static int freeRange(int n) {
    for (int tries = 0; tries < 200; tries++) {
      int base = 20_000 + ThreadLocalRandom.current().nextInt(10_000);
      if (allFree(base, n) && claim(base, n)) {
        return base;
      }
    }
    throw new IllegalStateException("no " + n + " consecutive free ports");
  }

  private static synchronized boolean claim(int base, int n) {
    for (int p = base; p < base + n; p++) {
      if (GIVEN.contains(p)) {
        return false;
      }
    }
    for (int p = base; p < base + n; p++) {
      GIVEN.add(p);
    }
    return true;
  }

  private static boolean allFree(int base, int n) {
    for (int p = base; p < base + n; p++) {
      try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
        s.setReuseAddress(true);
      } catch (IOException e) {
        return false;
      }
    }
    return true;
  }
}
