package io.conveyor.bench.chaos;

import io.conveyor.BusTrust;
import io.conveyor.testing.TestCerts;
import io.conveyor.testing.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The suite with TLS on (--tls): a CA of the run's and one pair per node, made with openssl (TestCerts, README's
 * three-node TLS commands). Each node serves HTTPS and the bus on mutual TLS with its pair; the driver trusts the CA
 * for HTTPS and joins the bus with a pair of its own (BusTrust), as an application on such a cluster does.
 */
final class ChaosTls {
  private final TestCerts certs;

  private ChaosTls(TestCerts certs) {
    this.certs = certs;
  }

  /** Makes the CA in dir/tls. */
  static ChaosTls in(Path dir) throws java.io.IOException {
    return new ChaosTls(new TestCerts(Files.createDirectories(dir.resolve("tls"))));
  }

  /** The CA's certificate: what the driver's HTTPS client trusts. */
  Path ca() {
    return certs.ca();
  }

  /** A node's settings: a pair of its own (CN=name) for HTTPS and the bus, and the CA the bus trusts. */
  Map<String, String> nodeEnv(String name) {
    TestCerts.Pair pair = certs.server(name, name);
    return Map.of("CONVEYOR_SECURITY_HTTP_TLS_CERT_FILE", pair.cert().toString(),
        "CONVEYOR_SECURITY_HTTP_TLS_KEY_FILE", pair.key().toString(),
        "CONVEYOR_SECURITY_BUS_TLS_CERT_FILE", pair.cert().toString(),
        "CONVEYOR_SECURITY_BUS_TLS_KEY_FILE", pair.key().toString(),
        "CONVEYOR_SECURITY_BUS_TLS_CA_FILE", ca().toString());
  }

  /** The driver's trust on the bus: a pair of the CA (CN=driver), checked as a node checks its own. */
  BusTrust driverTrust() {
    return TestCluster.trust(certs.server("driver", "driver"), ca());
  }
}
