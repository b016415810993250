package io.conveyor.testing;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A Redis ACL user of a test's own, on every server of the tests' Redis (each master of a Redis Cluster), allowed
 * everything at first. A node that connects as it can then be refused a command or a partition's keys by the test
 * (ACL SETUSER takes effect at once on the user's open connections) while the test's own connections, and every
 * other test's, go on as the default user. Deleted at close, which also drops its connections.
 */
public final class RedisUser implements AutoCloseable {
  private final String name;
  private final String password;

  private RedisUser(String name, String password) {
    this.name = name;
    this.password = password;
  }

  public static RedisUser create() {
    TestRedis.endpoints(); // the tests' Redis up (a cluster is started on first use)
    byte[] b = new byte[8];
    ThreadLocalRandom.current().nextBytes(b);
    String hex = HexFormat.of().formatHex(b);
    RedisUser user = new RedisUser("conveyor-test-" + hex, "pw-" + hex);
    user.set("on", ">" + user.password, "~*", "&*", "+@all");
    return user;
  }

  /** Sets the node to connect as this user (its URL and, on a Redis Cluster, its endpoints). */
  public TestNode on(TestNode node) {
    node.set("REDIS_URL", as(TestRedis.url()));
    if (TestRedis.clusterMode()) {
      List<String> endpoints = new ArrayList<>();
      TestRedis.endpoints().forEach(e -> endpoints.add(as(e)));
      node.set("REDIS_ENDPOINTS", String.join(",", endpoints));
    }
    return node;
  }

  private String as(String url) {
    return url.replaceFirst("^(rediss?://)", "$1" + name + ":" + password + "@");
  }

  /** ACL SETUSER with these rules, on every server, e.g. set("-subscribe") or set("resetkeys", "~a:*"). */
  public void set(String... rules) {
    Object[] args = new Object[rules.length + 3];
    args[0] = "ACL";
    args[1] = "SETUSER";
    args[2] = name;
    System.arraycopy(rules, 0, args, 3, rules.length);
    TestRedis.onEveryServer(args);
  }

  /** Whether Redis refused this user a command whose name contains the given one (its ACL LOG), on any server. */
  public boolean refused(String command) {
    for (var log : TestRedis.onEveryServer("ACL", "LOG")) {
      for (var entry : log) {
        String e = entry.toString();
        if (e.contains(name) && e.contains(command)) {
          return true;
        }
      }
    }
    return false;
  }

  @Override
  public void close() {
    TestRedis.onEveryServer("ACL", "DELUSER", name);
  }
}
