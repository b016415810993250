package io.conveyor.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Random free ports for servers a test starts itself. They lie below Linux's ephemeral range (32768 up), so no
 * outgoing connection takes one between the check and the server's bind; and none is handed out twice in a JVM,
 * since a killed cluster node's port stays in its cluster's view.
 */
final class FreePorts {
  private static final Set<Integer> GIVEN = ConcurrentHashMap.newKeySet();

  private FreePorts() {
  }

  /** A free port; with a cluster bus, one whose bus port (10000 above) is free too. */
  static int next(boolean clusterBus) {
    for (int i = 0; i < 1000; i++) {
      int port = ThreadLocalRandom.current().nextInt(10_000, 22_768);
      if (free(port) && (!clusterBus || free(port + 10_000)) && GIVEN.add(port)) {
        if (clusterBus) {
          GIVEN.add(port + 10_000);
        }
        return port;
      }
    }
    throw new IllegalStateException("no free port (with its bus port) in 10000-32767 after 1000 tries");
  }

  private static boolean free(int port) {
    if (GIVEN.contains(port)) {
      return false;
    }
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
