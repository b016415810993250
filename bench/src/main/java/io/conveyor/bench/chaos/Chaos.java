package io.conveyor.bench.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The chaos suite: three node processes from the fat jar on a private Redis (AOF) and a private PostgreSQL
 * archive, a steady load, and one fault per scenario; prints a line per run (stderr carries progress) and
 * a markdown table at the end. Usage: see ChaosOptions.USAGE and bench/README.md.
 */
public final class Chaos {
  private Chaos() {
  }

  public static void main(String[] args) throws Exception {
    quietDriverLogs();
    ChaosOptions options;
    try {
      options = ChaosOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("bench/chaos: " + e.getMessage());
      System.exit(2);
      return;
    }
    Path base = Files.createTempDirectory("chaos-", PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwxr-xr-x")));
    List<Row> rows = new ArrayList<>();
    boolean keep = options.keep();
    try {
      RedisServer redis = new RedisServer(Ports.free(), base.resolve("redis"));
      redis.start();
      PgServer pg = new PgServer(Ports.free(), base.resolve("pg"));
      pg.start();
      System.err.println("chaos: private Redis on " + redis.port() + " and PostgreSQL at " + pg.url() + " under "
          + base);
      ChaosRun runner = new ChaosRun(options, redis, pg);
      for (Scenario s : options.scenarios()) {
        for (int run = 1; run <= options.runsOf(s); run++) {
          Row row;
          try {
            row = runner.run(s, run, base.resolve(s.label + "-" + run));
          } catch (Exception e) {
            e.printStackTrace();
            row = Row.failedRun(s.label, run, String.valueOf(e));
            keep = true;
          }
          rows.add(row);
          keep |= row.lost() != 0 || Double.isNaN(row.recoverSeconds());
          System.out.println(row.line());
          System.out.flush();
        }
      }
    } finally {
      Teardown.all();
      System.out.println();
      System.out.println(Row.HEADER);
      rows.forEach(r -> System.out.println(r.markdown()));
      Row.worstRuns(rows).forEach(System.out::println);
      if (keep) {
        System.err.println("chaos: logs kept in " + base);
      } else {
        delete(base);
      }
    }
    System.exit(rows.stream().anyMatch(r -> r.lost() < 0) ? 1 : 0);
  }

  /**
   * The driver is a cluster member too: Hazelcast's warnings about the nodes the suite kills, and Vert.x's
   * about their reset connections, are the faults themselves, not news. Nodes keep their own logs.
   */
  private static void quietDriverLogs() {
    System.setProperty("hazelcast.logging.type", "slf4j");
    if (org.slf4j.LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext c) {
      c.getLogger("com.hazelcast").setLevel(ch.qos.logback.classic.Level.OFF);
      c.getLogger("io.vertx.core.net.impl.ConnectionBase").setLevel(ch.qos.logback.classic.Level.OFF);
      c.getLogger("io.vertx.core.eventbus.impl.clustered").setLevel(ch.qos.logback.classic.Level.ERROR);
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> tree = Files.walk(dir)) {
      tree.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException e) {
      System.err.println("chaos: could not delete " + dir + ": " + e.getMessage());
    }
  }
}
