package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.hazelcast.config.NetworkConfig;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.Test;

class HazelcastConfigTest {

  @Test
  void a_port_nobody_listens_on_is_free_and_one_that_never_replies_is_not_hazelcast() throws Exception {
    int free;
    try (ServerSocket s = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      free = s.getLocalPort();
    }
    try (ServerSocket silent = silentServer()) {
      assertEquals(HazelcastConfig.Listener.NOBODY, HazelcastConfig.probe("127.0.0.1", free));
      assertEquals(HazelcastConfig.Listener.OTHER, HazelcastConfig.probe("127.0.0.1", silent.getLocalPort()));
    }
  }

  @Test
  void a_member_without_a_port_becomes_the_port_range_less_the_ports_held_by_other_programs() throws Exception {
    try (ServerSocket silent = silentServer()) {
      int base = silent.getLocalPort() - 1;
      NetworkConfig network = new NetworkConfig().setPort(base).setPortAutoIncrement(true).setPortCount(3);
      List<String> list = HazelcastConfig.joinList(List.of("127.0.0.1", "db.example:5799"), network);
      assertEquals(List.of("127.0.0.1:" + base, "127.0.0.1:" + (base + 2), "db.example:5799"), list);
    }
  }

  /** A server on a free loopback port that accepts (through its backlog) and never replies. */
  private static ServerSocket silentServer() throws Exception {
    ServerSocket s = new ServerSocket();
    s.bind(new InetSocketAddress("127.0.0.1", 0));
    return s;
  }
}
