package io.conveyor.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL of the test's own (the local 15 binaries, initdb into a temp dir), on a free port of 127.0.0.1 and
 * 127.0.0.2 with ssl=on and a certificate of the test CA for localhost and 127.0.0.1. It takes TLS connections only
 * (hostssl), so a connection that works was encrypted. The shared server on 5432 is not touched. As root, the
 * server runs as the postgres user (initdb refuses root). Close stops it (pg_ctl stop) and deletes the dir.
 */
public final class PgTlsServer implements AutoCloseable {
  private static final Path BIN = Path.of("/usr/lib/postgresql/15/bin");
  private final Path dir;
  private final int port;
  private final Thread hook;

  private PgTlsServer(Path dir, int port) {
    this.dir = dir;
    this.port = port;
    this.hook = new Thread(this::stopAndDelete, "pg-tls-stop");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** True when the binaries are here. */
  public static boolean available() {
    return Files.isExecutable(BIN.resolve("initdb")) && Files.isExecutable(BIN.resolve("pg_ctl"));
  }

  /** Makes the cluster and starts it (bounded), serving a certificate of certs' CA. */
  public static PgTlsServer start(TestCerts certs) {
    TestCerts.Pair pair = certs.server("postgres", "postgres-server");
    Path dir;
    try {
      dir = Files.createTempDirectory("pg-tls-").toRealPath();
      Files.copy(pair.cert(), dir.resolve("server.crt"), StandardCopyOption.REPLACE_EXISTING);
      Files.copy(pair.key(), dir.resolve("server.key"), StandardCopyOption.REPLACE_EXISTING);
      Files.setPosixFilePermissions(dir.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
      if (root()) {
        UserPrincipal postgres = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
        for (Path p : List.of(dir, dir.resolve("server.crt"), dir.resolve("server.key"))) {
          Files.setOwner(p, postgres);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    run(dir, BIN.resolve("initdb").toString(), "-D", dir.resolve("data").toString(), "-A", "trust", "-U", "postgres",
        "--no-sync", "-E", "UTF8");
    try {
      Files.writeString(dir.resolve("data/pg_hba.conf"), "local all all trust\nhostssl all all 127.0.0.0/8 trust\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int port = FreePorts.next(false);
    PgTlsServer server = new PgTlsServer(dir, port);
    try {
      run(dir, BIN.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-l",
          dir.resolve("server.log").toString(), "-w", "-t", "30", "-o", String.join(" ", "-p", Integer.toString(port),
              "-h", "127.0.0.1,127.0.0.2", "-k", dir.toString(), "-c", "ssl=on", "-c", "ssl_cert_file=" + dir
                  .resolve("server.crt"), "-c", "ssl_key_file=" + dir.resolve("server.key"), "-c", "fsync=off"),
          "start");
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw new IllegalStateException(e.getMessage() + "; its log: " + server.log(), e);
    }
  }

  /** postgresql://postgres@HOST:PORT/postgres, with the query given (e.g. ?sslmode=require) or none. */
  public String url(String host, String query) {
    return "postgresql://postgres@" + host + ":" + port + "/postgres" + query;
  }

  private String log() {
    try {
      return Files.readString(dir.resolve("server.log"));
    } catch (IOException e) {
      return "(none: " + e.getMessage() + ")";
    }
  }

  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is shutting down and the hook runs anyway
    }
    stopAndDelete();
  }

  private void stopAndDelete() {
    if (Files.exists(dir.resolve("data/postmaster.pid"))) {
      try {
        run(dir, BIN.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-m", "immediate", "-w",
            "stop");
      } catch (RuntimeException e) {
        // reported by the test that needed it; the dir goes anyway
      }
    }
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // a leftover temp dir harms nobody
    }
  }

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  /** Runs a PostgreSQL binary to its end (bounded), as postgres when this JVM is root. */
  private static void run(Path dir, String... args) {
    List<String> command = new ArrayList<>(root() ? List.of("runuser", "-u", "postgres", "--") : List.of());
    command.addAll(List.of(args));
    try {
      Path out = Files.createTempFile("pg-ctl-", ".out");
      try {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
            .redirectOutput(out.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          throw new IllegalStateException(String.join(" ", command) + " did not end within 60 s");
        }
        if (p.exitValue() != 0) {
          throw new IllegalStateException(String.join(" ", command) + " failed: "
              + Files.readString(out, StandardCharsets.UTF_8));
        }
      } finally {
        Files.deleteIfExists(out);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
