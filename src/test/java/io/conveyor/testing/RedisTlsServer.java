package io.conveyor.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real redis-server (/usr/bin/redis-server, built with TLS) serving TLS on a free port with a certificate of the
 * test CA for localhost and 127.0.0.1, and asking clients for a certificate of that CA when told to. It listens on
 * 127.0.0.1 and 127.0.0.2 (a name its certificate lacks), and on a plain port of its own, which only the fixture
 * and the test's assertions use.
 */
public final class RedisTlsServer implements AutoCloseable {
  private final RedisProcesses servers;
  private final int plainPort;
  private final int tlsPort;

  private RedisTlsServer(RedisProcesses servers, int plainPort, int tlsPort) {
    this.servers = servers;
    this.plainPort = plainPort;
    this.tlsPort = tlsPort;
  }

  /** True when the local redis-server can serve TLS (a build without it refuses --tls-port). */
  public static boolean available() {
    return Files.isExecutable(Path.of(RedisProcesses.SERVER)) && Files.isExecutable(Path.of(RedisCli.PATH));
  }

  /** Starts it (bounded); with clientCertificates, a client without a certificate of the CA is refused. */
  public static RedisTlsServer start(TestCerts certs, boolean clientCertificates) {
    TestCerts.Pair pair = certs.server("redis", "redis-server");
    RedisProcesses servers = new RedisProcesses("redis-tls-");
    try {
      int[] tls = new int[1];
      int plain = servers.start(false, port -> {
        tls[0] = FreePorts.next(false);
        List<String> command = new ArrayList<>(servers.serverArgs(port));
        command.addAll(List.of("--bind", "127.0.0.1", "127.0.0.2", "--tls-port", Integer.toString(tls[0]),
            "--tls-cert-file", pair.cert().toString(), "--tls-key-file", pair.key().toString(),
            "--tls-ca-cert-file", certs.ca().toString(), "--tls-auth-clients", clientCertificates ? "yes" : "no"));
        return command;
      });
      return new RedisTlsServer(servers, plain, tls[0]);
    } catch (RuntimeException | AssertionError e) {
      servers.close();
      throw e;
    }
  }

  /** rediss://127.0.0.1:PORT, a name the server's certificate holds. */
  public String url() {
    return url("127.0.0.1");
  }

  /** The TLS port by another address (127.0.0.2 is not in the certificate). */
  public String url(String host) {
    return "rediss://" + host + ":" + tlsPort;
  }

  /** redis://127.0.0.1:PORT of its plain port. */
  public String plainUrl() {
    return "redis://127.0.0.1:" + plainPort;
  }

  /** One command over the plain port, the reply as redis-cli prints it. */
  public String cmd(String... args) {
    return RedisCli.run(plainPort, null, args);
  }

  @Override
  public void close() {
    servers.close();
  }
}
