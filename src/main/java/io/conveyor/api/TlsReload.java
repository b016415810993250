package io.conveyor.api;

import io.conveyor.config.Config;
import io.conveyor.config.TlsPair;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.net.ServerSSLOptions;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the HTTP server's certificate current (README, TLS): every reloadInterval it reads both PEM files again
 * and, when their bytes changed and the new pair checks, serves it to new connections (one log line). A bad pair
 * (half-written, a key of another certificate, a file gone) is logged once and the pair served before stays.
 * Bytes rather than modification times: a copy within the same second, or a swapped symlink, still counts.
 * Runs on the HTTP API verticle's context; the timer re-arms after each look.
 */
final class TlsReload {
  private static final Logger log = LoggerFactory.getLogger(TlsReload.class);
  private final Vertx vertx;
  private final HttpServer server;
  private final Config.HttpTls tls;
  private TlsPair served;
  private String problem;
  private long timer = -1;
  private boolean stopped;

  TlsReload(Vertx vertx, HttpServer server, Config.HttpTls tls, TlsPair served) {
    this.vertx = vertx;
    this.server = server;
    this.tls = tls;
    this.served = served;
  }

  void start() {
    if (!stopped) {
      timer = vertx.setTimer(tls.reloadInterval().toMillis(), id -> look().onComplete(done -> start()));
    }
  }

  void stop() {
    stopped = true;
    vertx.cancelTimer(timer);
  }

  private Future<Void> look() {
    Path certFile = Path.of(tls.certFile());
    Path keyFile = Path.of(tls.keyFile());
    return Future.all(vertx.fileSystem().readFile(tls.certFile()), vertx.fileSystem().readFile(tls.keyFile()))
        .<Void>compose(files -> {
          byte[] cert = files.<Buffer>resultAt(0).getBytes();
          byte[] key = files.<Buffer>resultAt(1).getBytes();
          if (served.sameFiles(cert, key)) {
            problem = null;
            return Future.succeededFuture();
          }
          TlsPair next = TlsPair.of(cert, key, certFile, keyFile);
          return server.updateSSLOptions(new ServerSSLOptions().setKeyCertOptions(next.options())).map(updated -> {
            served = next;
            problem = null;
            log.info("HTTP TLS: now serving the certificate of {} ({})", certFile, next.describe());
            return null;
          });
        })
        .recover(e -> {
          if (!String.valueOf(e.getMessage()).equals(problem)) {
            problem = String.valueOf(e.getMessage());
            log.warn("HTTP TLS: keeps serving {}; the files cannot serve: {}", served.describe(), problem);
          }
          return Future.succeededFuture();
        });
  }
}
