package io.conveyor.bench.chaos;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A private PostgreSQL cluster (initdb into a directory of the suite's own, trust auth, its own port and
 * socket directory), so the archive database can be stopped without touching the shared one on 5432.
 * As root, initdb and postgres run as the postgres user.
 */
final class PgServer {
  private final int port;
  private final Path dir;
  private final Path bin;
  private Runnable undo;

  PgServer(int port, Path dir) {
    this.port = port;
    this.dir = dir;
    this.bin = findBin();
  }

  /** The archive URL the nodes take (archive.url: postgresql://user@host:port/db). */
  String url() {
    return "postgresql://postgres@127.0.0.1:" + port + "/postgres";
  }

  /** initdb (once) and start; waits until it accepts connections. */
  void start() throws IOException {
    if (!Files.exists(dir.resolve("PG_VERSION"))) {
      Files.createDirectories(dir);
      Procs.run(Duration.ofSeconds(10), List.of("chown", "postgres", dir.toString()));
      must(Procs.run(Duration.ofSeconds(120), Procs.as("postgres", List.of(bin.resolve("initdb").toString(), "-D",
          dir.toString(), "-A", "trust", "-U", "postgres", "--no-sync"))), "initdb");
    }
    must(Procs.run(Duration.ofSeconds(60), Procs.as("postgres", List.of(bin.resolve("pg_ctl").toString(), "-D",
        dir.toString(), "-o", "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off", "-l",
        dir.resolve("server.log").toString(), "-w", "start"))), "pg_ctl start");
    undo = Teardown.add(this::stopQuietly);
  }

  /** pg_ctl stop -m fast: the server refuses new connections and ends the open ones. */
  void stop() {
    if (undo != null) {
      undo.run();
      undo = null;
    }
  }

  private void stopQuietly() {
    Procs.run(Duration.ofSeconds(60), Procs.as("postgres", List.of(bin.resolve("pg_ctl").toString(), "-D",
        dir.toString(), "-m", "fast", "-w", "stop")));
  }

  /** Rows in the table, or -1 when the server did not answer (or the table is not there yet). */
  long rows(String table) {
    String out = Procs.run(Duration.ofSeconds(5), List.of("psql", "-h", "127.0.0.1", "-p", Integer.toString(port),
        "-U", "postgres", "-d", "postgres", "-tAc", "SELECT count(*) FROM " + table));
    try {
      return out == null ? -1 : Long.parseLong(out.strip());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Runs one statement; its output, or null when it failed. */
  String sql(String statement) {
    return Procs.run(Duration.ofSeconds(10), List.of("psql", "-h", "127.0.0.1", "-p", Integer.toString(port), "-U",
        "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-tAc", statement));
  }

  private static void must(String out, String what) throws IOException {
    if (out == null) {
      throw new IOException(what + " failed (see the server log under the suite's directory)");
    }
  }

  /** The newest /usr/lib/postgresql/N/bin, where Debian puts initdb and pg_ctl. */
  private static Path findBin() {
    try (var versions = Files.list(Path.of("/usr/lib/postgresql"))) {
      return versions.map(v -> v.resolve("bin")).filter(b -> Files.isExecutable(b.resolve("initdb")))
          .max(java.util.Comparator.comparing(b -> Integer.parseInt(b.getParent().getFileName().toString())))
          .orElseThrow(() -> new IllegalStateException("no initdb under /usr/lib/postgresql/*/bin"));
    } catch (IOException e) {
      throw new IllegalStateException("no /usr/lib/postgresql: PostgreSQL's server binaries are needed", e);
    }
  }
}
