package io.conveyor.bench.chaos;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/** Free TCP ports on 127.0.0.1, never fixed ones. */
final class Ports {
  private Ports() {
  }

  static int free() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException("no free port", e);
    }
  }

  /** The first of n consecutive free ports, away from Hazelcast's default 5701 range and the ephemeral range. */
  static int freeRange(int n) {
    for (int tries = 0; tries < 200; tries++) {
      int base = 20_000 + ThreadLocalRandom.current().nextInt(10_000);
      if (allFree(base, n)) {
        return base;
      }
    }
    throw new IllegalStateException("no " + n + " consecutive free ports");
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
