package io.conveyor.testing;

import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Another process holding ports the way other programs on a machine do: the first port a member of a foreign
 * Hazelcast cluster (another name), the others plain servers that accept and never reply. A port something
 * else already holds stays as it is. The process ends when the test closes it, or when the test JVM dies
 * (its stdin closes).
 */
public final class PortHolder implements AutoCloseable {
  private final Process process;
  /** What holds each port, e.g. "5701=hazelcast 5702=silent 5703=taken". */
  public final String held;

  private PortHolder(Process process, String held) {
    this.process = process;
    this.held = held;
  }

  /** Starts the holder and waits (bounded) until it holds what it can. */
  public static PortHolder start(int... ports) throws IOException {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx128m", "-Dhazelcast.logging.type=none", "-cp", System.getProperty("java.class.path"),
        PortHolder.class.getName()));
    for (int p : ports) {
      cmd.add(Integer.toString(p));
    }
    Process process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    try {
      String line = CompletableFuture.supplyAsync(() -> readHolding(out)).get(60, TimeUnit.SECONDS);
      return new PortHolder(process, line.substring("holding ".length()));
    } catch (Exception e) {
      process.destroyForcibly();
      throw new IOException("the port holder did not start: " + e.getMessage(), e);
    }
  }

  private static String readHolding(BufferedReader out) {
    try {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        if (line.startsWith("holding ")) {
          return line;
        }
      }
      throw new IllegalStateException("the port holder exited");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
    }
  }

  /** The holder process: holds the ports, says what holds each, and waits for stdin to close. */
  public static void main(String[] args) throws IOException {
    StringBuilder held = new StringBuilder("holding");
    for (int i = 0; i < args.length; i++) {
      int port = Integer.parseInt(args[i]);
      String what = i == 0 && foreignHazelcast(port) ? "hazelcast" : silentServer(port) ? "silent" : "taken";
      held.append(' ').append(port).append('=').append(what);
    }
    System.out.println(held);
    System.out.flush();
    while (System.in.read() != -1) {
      // until the test closes us or dies
    }
    Runtime.getRuntime().halt(0);
  }

  /** A one-member Hazelcast cluster of another name, pinned to the port (none when the port is taken). */
  private static boolean foreignHazelcast(int port) {
    Config c = new Config().setClusterName("foreign-" + TestCluster.newName());
    c.setProperty("hazelcast.phone.home.enabled", "false");
    c.setProperty("hazelcast.socket.bind.any", "false");
    c.setProperty("hazelcast.wait.seconds.before.join", "0");
    c.getNetworkConfig().setPort(port).setPortAutoIncrement(false).getInterfaces().setEnabled(true)
        .addInterface("127.0.0.1");
    c.getNetworkConfig().getJoin().getAutoDetectionConfig().setEnabled(false);
    c.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
    c.getNetworkConfig().getJoin().getTcpIpConfig().setEnabled(true).addMember("127.0.0.1:" + port);
    try {
      Hazelcast.newHazelcastInstance(c);
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** A server that accepts connections and keeps them, never writing a byte. */
  private static boolean silentServer(int port) {
    ServerSocket server;
    try {
      server = new ServerSocket();
      server.bind(new InetSocketAddress("127.0.0.1", port));
    } catch (IOException e) {
      return false;
    }
    Thread t = new Thread(() -> {
      List<Socket> kept = new ArrayList<>();
      try {
        while (true) {
          kept.add(server.accept());
        }
      } catch (IOException e) {
        // the process is ending
      }
    }, "silent-" + port);
    t.setDaemon(true);
    t.start();
    return true;
  }
}
