package io.conveyor.testing;

import java.util.List;

/**
 * A redis-server of the test's own that persists every write before it answers (appendonly yes, appendfsync
 * always), on a free port: a test kills it with -9 and starts it again on the same port and directory, and it comes
 * back with every write it acknowledged. Close stops it.
 */
public final class AofRedis implements AutoCloseable {
  private final RedisProcesses processes = new RedisProcesses("aof-redis");
  public final int port;

  public AofRedis() {
    port = processes.start(false, this::command);
  }

  private List<String> command(int free) {
    List<String> args = processes.serverArgs(free);
    int at = args.indexOf("--appendonly");
    args.set(at + 1, "yes");
    args.addAll(List.of("--appendfsync", "always"));
    return args;
  }

  public String url() {
    return "redis://127.0.0.1:" + port;
  }

  /** A command on this server, by redis-cli; its reply as text. */
  public String cli(String... args) {
    return RedisCli.run(port, null, args);
  }

  /** kill -9: a crash, with no chance to save anything more. */
  public void kill() {
    processes.kill(port);
  }

  /** Starts it again on its port and directory: it loads its append-only file before it answers. */
  public void restart() {
    processes.restart(port, command(port));
  }

  @Override
  public void close() {
    processes.close();
  }
}
