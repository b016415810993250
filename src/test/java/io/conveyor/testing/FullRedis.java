package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import redis.embedded.RedisServer;

/**
 * A Redis of the test's own with a small maxmemory and noeviction, to fill up: the local redis-server (7.x), or the
 * embedded Redis 6.2 a quick-start node runs. Each on a free port; close stops it.
 */
public final class FullRedis implements AutoCloseable {
  private final RedisProcesses processes;
  private final RedisServer embedded;
  public final int port;

  private FullRedis(RedisProcesses processes, RedisServer embedded, int port) {
    this.processes = processes;
    this.embedded = embedded;
    this.port = port;
  }

  /** The local redis-server with this maxmemory (e.g. "64mb") and noeviction. */
  public static FullRedis local(String maxmemory) {
    RedisProcesses p = new RedisProcesses("full-redis");
    int port = p.start(false, free -> {
      List<String> args = p.serverArgs(free);
      args.addAll(List.of("--maxmemory", maxmemory, "--maxmemory-policy", "noeviction"));
      return args;
    });
    return new FullRedis(p, null, port);
  }

  /** The embedded Redis 6.2 (the quick start's) with this maxmemory and noeviction. */
  public static FullRedis embedded(String maxmemory) {
    int port = FreePorts.next(false);
    RedisServer server;
    try {
      server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"")
          .setting("appendonly no").setting("maxmemory " + maxmemory).setting("maxmemory-policy noeviction").build();
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the embedded Redis: " + e.getMessage(), e);
    }
    return new FullRedis(null, server, port);
  }

  public String url() {
    return "redis://127.0.0.1:" + port;
  }

  /** A command on this server, by redis-cli; its reply as text. */
  public String cli(String... args) {
    return RedisCli.run(port, null, args);
  }

  /** One INFO field of this server, e.g. info("memory", "used_memory"). */
  public long info(String section, String field) {
    for (String line : cli("INFO", section).split("\r?\n")) {
      if (line.startsWith(field + ":")) {
        return Long.parseLong(line.substring(field.length() + 1).trim());
      }
    }
    throw new IllegalStateException("INFO " + section + " has no " + field);
  }

  @Override
  public void close() {
    if (processes != null) {
      processes.close();
    }
    if (embedded != null) {
      try {
        embedded.stop();
      } catch (IOException e) {
        // the test is over; the process goes with the JVM at the latest
      }
    }
  }
}
