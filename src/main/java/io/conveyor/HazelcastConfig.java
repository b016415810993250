package io.conveyor;

import com.hazelcast.config.Config;
import com.hazelcast.config.FileSystemXmlConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.TcpIpConfig;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Hazelcast config of a cluster member: a file loaded by path (a missing file fails loudly instead of
 * falling back to multicast), the cluster named, and the TCP-IP join list made explicit. Each IPv4 member
 * given without a port becomes one entry per port of the member port range, less the ports where something
 * that is not Hazelcast listens: Hazelcast waits for an answer from every address it tries, so one port held
 * by a program that accepts and never replies stalls the first member's join for as long as
 * hazelcast.max.join.seconds (10 s per mastership claim, 300 s in all).
 */
public final class HazelcastConfig {
  private static final Logger log = LoggerFactory.getLogger(HazelcastConfig.class);
  /** Hazelcast answers its protocol header with its own in milliseconds; a second leaves room for a busy one. */
  private static final int PROBE_MILLIS = 1000;
  private static final byte[] PROTOCOL = "HZC".getBytes(StandardCharsets.US_ASCII);
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  /** The name Hazelcast gives a cluster when its file names none. */
  private static final String UNNAMED = "dev";

  /** What listens at a port, as a probe sees it. */
  enum Listener { NOBODY, HAZELCAST, OTHER }

  private HazelcastConfig() {
  }

  /** The file at path, with the given cluster name and a join list that skips ports held by other programs. */
  public static Config load(String path, String clusterName) throws FileNotFoundException {
    Config hz = new FileSystemXmlConfig(path);
    if (!hz.getClusterName().equals(UNNAMED) && !hz.getClusterName().equals(clusterName)) {
      log.warn("{} names the cluster {}, but this member joins {} (see cluster.name)", path, hz.getClusterName(),
          clusterName);
    }
    hz.setClusterName(clusterName);
    TcpIpConfig tcp = hz.getNetworkConfig().getJoin().getTcpIpConfig();
    if (tcp.isEnabled()) {
      tcp.setMembers(joinList(tcp.getMembers(), hz.getNetworkConfig()));
    }
    return hz;
  }

  static List<String> joinList(List<String> members, NetworkConfig network) {
    int ports = network.isPortAutoIncrement() ? network.getPortCount() : 1;
    List<String> candidates = new ArrayList<>();
    for (String member : members) {
      if (IPV4.matcher(member).matches()) {
        for (int p = network.getPort(); p < network.getPort() + ports; p++) {
          candidates.add(member + ":" + p);
        }
      } else {
        candidates.add(member); // a name, a range or an explicit port: Hazelcast's own reading
      }
    }
    List<Listener> found = probeAll(candidates);
    List<String> kept = new ArrayList<>();
    for (int i = 0; i < candidates.size(); i++) {
      if (found.get(i) == Listener.OTHER) {
        log.info("Hazelcast join list: {} is held by something that is not Hazelcast; left out", candidates.get(i));
      } else {
        kept.add(candidates.get(i));
      }
    }
    return kept;
  }

  /** Probes every host:port candidate at once, so the probe costs one timeout at most. */
  private static List<Listener> probeAll(List<String> candidates) {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(candidates.size(), 32)));
    try {
      List<Future<Listener>> probes = new ArrayList<>();
      for (String c : candidates) {
        int colon = c.lastIndexOf(':');
        probes.add(colon < 0 || !IPV4.matcher(c.substring(0, colon)).matches()
            ? pool.submit(() -> Listener.NOBODY)
            : pool.submit(() -> probe(c.substring(0, colon), Integer.parseInt(c.substring(colon + 1)))));
      }
      List<Listener> found = new ArrayList<>();
      for (Future<Listener> f : probes) {
        found.add(f.get());
      }
      return found;
    } catch (Exception e) {
      throw new IllegalStateException("cannot probe the Hazelcast join list " + candidates, e);
    } finally {
      pool.shutdownNow();
    }
  }

  /** A Hazelcast member answers the member protocol header "HZC" with its own; anything else is not one. */
  static Listener probe(String host, int port) {
    boolean connected = false;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), PROBE_MILLIS);
      connected = true;
      s.setSoTimeout(PROBE_MILLIS);
      s.getOutputStream().write(PROTOCOL);
      byte[] reply = s.getInputStream().readNBytes(PROTOCOL.length);
      return Arrays.equals(reply, PROTOCOL) ? Listener.HAZELCAST : Listener.OTHER;
    } catch (IOException e) {
      // refused or unreachable now: a member may bind it later, so it stays in the list
      return connected ? Listener.OTHER : Listener.NOBODY;
    }
  }
}
