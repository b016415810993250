package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.config.TlsPair;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Signature;
import java.security.cert.CertPathValidator;
import java.security.cert.CertificateFactory;
import java.security.cert.PKIXParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;

/**
 * Trust among the members of a cluster (security.bus.tls, docs/cluster.md): the node's certificate, signed by the
 * cluster CA, and the CA. It sets the event bus to mutual TLS that trusts the CA alone, and proves this member to
 * the others by an attestation in its node info: its certificate chain and its signature over its node id, host and
 * port. A member whose attestation does not verify against the CA is never routed to (AttestedClusterManager), and
 * one whose certificate's subject CN does not match security.bus.tls.nodeSubject is not routed to on conveyor.*
 * addresses: only Conveyor nodes serve the API and internal addresses, where API keys travel.
 * A program of yours that joins the cluster and serves or sends on the bus uses it too, with a pair of its own:
 * {@code BusTrust.load(new Config.BusTls(cert, key, ca), clock)}, then {@code secure} and {@code attested}.
 */
public final class BusTrust {
  /** The key of the attestation in a member's node info metadata. */
  static final String ATTESTATION = "conveyor.attestation";
  private static final String SECTION = "security.bus.tls";
  /** Caps on an attestation's chain, checked before any parsing: a member's chain is a few certificates. */
  static final int MAX_CHAIN_CHARS = 32 * 1024;
  static final int MAX_CHAIN_CERTIFICATES = 8;
  private final TlsPair pair;
  private final byte[] caPem;
  private final Set<TrustAnchor> anchors;
  private final Clock clock;
  private final Pattern nodeSubject;

  private BusTrust(TlsPair pair, byte[] caPem, Set<TrustAnchor> anchors, Clock clock, Pattern nodeSubject) {
    this.pair = pair;
    this.caPem = caPem;
    this.anchors = anchors;
    this.clock = clock;
    this.nodeSubject = nodeSubject;
  }

  /**
   * A member's verdict: refusal null when it proves a certificate of the CA; node when that certificate's subject CN
   * matches the node rule; notAfter, the first moment a certificate of its chain is no longer valid.
   */
  record Verdict(String refusal, boolean node, Instant notAfter) {
    static Verdict refused(String why) {
      return new Verdict(why, false, Instant.MAX);
    }
  }

  /** The trust of a Conveyor node: as load, and its own certificate's subject matches the node rule. */
  public static BusTrust loadNode(Config.BusTls tls, Clock clock) {
    BusTrust trust = load(tls, clock);
    String cn = commonName(certificates(trust.pair.cert()).get(0));
    if (!trust.nodeSubject.matcher(cn).matches()) {
      throw TlsPair.refusal(SECTION + ".nodeSubject", "the subject CN " + cn + " of " + tls.certFile()
          + " does not match " + tls.nodeSubject() + ": other nodes would not route the API's addresses to this one");
    }
    return trust;
  }

  /**
   * Reads and checks the three files (a blocking read: at start): the pair as HTTP's is checked, the CA parses,
   * and the node's certificate chains to it now. A refusal is a ConfigException naming the setting and the file.
   */
  public static BusTrust load(Config.BusTls tls, Clock clock) {
    TlsPair pair = TlsPair.load(SECTION, tls.certFile(), tls.keyFile());
    Path caFile = Path.of(tls.caFile());
    byte[] caPem;
    try {
      caPem = Files.readAllBytes(caFile);
    } catch (IOException e) {
      throw TlsPair.refusal(SECTION + ".caFile", "the CA file " + caFile + " cannot be read (" + e + ")");
    }
    List<X509Certificate> cas = certificates(caPem);
    if (cas.isEmpty()) {
      throw TlsPair.refusal(SECTION + ".caFile", "the CA file " + caFile + " holds no PEM certificate");
    }
    BusTrust trust = new BusTrust(pair, caPem, cas.stream().map(c -> new TrustAnchor(c, null))
        .collect(Collectors.toUnmodifiableSet()), clock, Pattern.compile(tls.nodeSubject()));
    String why = trust.unproven(certificates(pair.cert()));
    if (why != null) {
      throw TlsPair.refusal(SECTION + ".certFile", "the certificate in " + tls.certFile()
          + " is not one the cluster CA in " + caFile + " vouches for: " + why);
    }
    return trust;
  }

  /** The event bus on mutual TLS: this node's pair, the CA alone trusted, a client certificate required. */
  public EventBusOptions secure(EventBusOptions options) {
    return options.setSsl(true).setKeyCertOptions(pair.options()).setClientAuth(ClientAuth.REQUIRED)
        .setTrustOptions(new PemTrustOptions().addCertValue(Buffer.buffer(caPem)));
  }

  /** The cluster manager, routing only to members whose attestation verifies, and attesting this one. */
  public ClusterManager attested(ClusterManager manager) {
    return new AttestedClusterManager(manager, this);
  }

  /** For a log line: this node's certificate. */
  public String describe() {
    return pair.describe();
  }

  /** This member's attestation: its certificate chain (PEM) and its signature over what names it. */
  JsonObject attest(String nodeId, String host, int port) {
    try {
      Signature sign = Signature.getInstance(TlsPair.signatureAlgorithm(pair.privateKey().getAlgorithm()));
      sign.initSign(pair.privateKey());
      sign.update(signed(nodeId, host, port));
      return new JsonObject().put("chain", new String(pair.cert(), StandardCharsets.US_ASCII))
          .put("signature", Base64.getEncoder().encodeToString(sign.sign()));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign this member's attestation: " + e.getMessage(), e);
    }
  }

  /** Why a member's node info proves no certificate of the cluster's for that node id, host and port; null if it does. */
  String refusal(String nodeId, NodeInfo info) {
    return verdict(nodeId, info).refusal();
  }

  /** The attestation of a member, or null when its node info has none (for a cache key). */
  static JsonObject attestation(NodeInfo info) {
    return info == null || info.metadata() == null ? null : info.metadata().getJsonObject(ATTESTATION);
  }

  /** The verdict on a member's node info (PKIX and a signature: blocking work, for a worker thread). */
  Verdict verdict(String nodeId, NodeInfo info) {
    JsonObject attestation = attestation(info);
    if (attestation == null || !(attestation.getValue("chain") instanceof String pem)
        || !(attestation.getValue("signature") instanceof String signature)) {
      return Verdict.refused("no attestation in its node info (a member without bus TLS, or not a Conveyor)");
    }
    if (pem.length() > MAX_CHAIN_CHARS || pem.split("-----BEGIN", -1).length - 1 > MAX_CHAIN_CERTIFICATES) {
      return Verdict.refused("its chain is longer than " + MAX_CHAIN_CHARS + " characters or "
          + MAX_CHAIN_CERTIFICATES + " certificates");
    }
    try {
      List<X509Certificate> chain = certificates(pem.getBytes(StandardCharsets.US_ASCII));
      String why = unproven(chain);
      if (why != null) {
        return Verdict.refused(why);
      }
      X509Certificate leaf = chain.get(0);
      Signature verify = Signature.getInstance(TlsPair.signatureAlgorithm(leaf.getPublicKey().getAlgorithm()));
      verify.initVerify(leaf.getPublicKey());
      verify.update(signed(nodeId, info.host(), info.port()));
      if (!verify.verify(Base64.getDecoder().decode(signature))) {
        return Verdict.refused("its signature is not over its node id, host and port ("
            + leaf.getSubjectX500Principal().getName() + ")");
      }
      Instant notAfter = chain.stream().map(c -> c.getNotAfter().toInstant()).min(Instant::compareTo).orElseThrow();
      return new Verdict(null, nodeSubject.matcher(commonName(leaf)).matches(), notAfter.plusSeconds(1));
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return Verdict.refused("its attestation does not verify (" + e.getMessage() + ")");
    }
  }

  /** The clock certificates are judged by. */
  Instant now() {
    return clock.instant();
  }

  /** A certificate's subject CN (the last, if several), or "" when it has none. */
  static String commonName(X509Certificate cert) {
    try {
      String cn = "";
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        cn = rdn.getType().equalsIgnoreCase("CN") ? String.valueOf(rdn.getValue()) : cn;
      }
      return cn;
    } catch (InvalidNameException e) {
      return "";
    }
  }

  /** Why the chain does not lead to the CA now (by the injected clock); null if it does. */
  private String unproven(List<X509Certificate> chain) {
    if (chain.isEmpty()) {
      return "no certificate";
    }
    List<X509Certificate> path = new ArrayList<>(chain);
    path.removeIf(c -> anchors.stream().anyMatch(a -> a.getTrustedCert().equals(c))); // the CA itself, if sent along
    if (path.isEmpty()) {
      return "it is the CA's own certificate, not a member's";
    }
    try {
      PKIXParameters params = new PKIXParameters(anchors);
      params.setRevocationEnabled(false);
      params.setDate(Date.from(clock.instant()));
      CertPathValidator.getInstance("PKIX").validate(CertificateFactory.getInstance("X.509").generateCertPath(path),
          params);
      return null;
    } catch (GeneralSecurityException e) {
      return e.getMessage();
    }
  }

  private static byte[] signed(String nodeId, String host, int port) {
    return ("conveyor bus attestation 1\n" + nodeId + "\n" + host + "\n" + port).getBytes(StandardCharsets.UTF_8);
  }

  private static List<X509Certificate> certificates(byte[] pem) {
    try {
      List<X509Certificate> out = new ArrayList<>();
      CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem))
          .forEach(c -> out.add((X509Certificate) c));
      return out;
    } catch (GeneralSecurityException e) {
      return List.of();
    }
  }
}
