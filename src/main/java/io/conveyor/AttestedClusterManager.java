package io.conveyor;

import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.spi.cluster.RegistrationListener;
import io.vertx.core.spi.cluster.RegistrationUpdateEvent;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster manager as the event bus sees it when bus TLS is on (docs/decisions.md, "A rogue member gets nothing"):
 * Hazelcast's, except that this member's node info carries its attestation, and a registration (a consumer) of a
 * member whose node info does not verify against the cluster CA is left out of what the bus routes by, both when the
 * bus asks for an address's consumers and when the consumers change; on conveyor.* addresses (the API's, where keys
 * travel, and the nodes' own) so is that of a member whose certificate is not a node's (security.bus.tls.nodeSubject).
 * Open-source Hazelcast lets anyone join and write its maps; this keeps such a member from receiving a share of the
 * cluster's requests. A proof is kept until the member leaves or its certificate's notAfter passes; a refusal is
 * kept per node id and attestation (bounded, for REFUSAL_TTL) and logged once. Certificates are checked on a worker.
 * Vert.x calls this from its event loops and from Hazelcast's threads: its state is concurrent maps only.
 */
final class AttestedClusterManager implements ClusterManager {
  private static final Logger log = LoggerFactory.getLogger(AttestedClusterManager.class);
  /** The prefix of the addresses only Conveyor nodes may serve (Addresses). */
  static final String NODE_ADDRESSES = "conveyor.";
  static final int MAX_REFUSALS = 1024;
  static final Duration REFUSAL_TTL = Duration.ofMinutes(1);
  private final ClusterManager delegate;
  private final BusTrust trust;
  private final Map<String, BusTrust.Verdict> proven = new ConcurrentHashMap<>();
  /** Refusals by node id and attestation hash, with the moment they were made. */
  private final Map<String, Instant> refused = new ConcurrentHashMap<>();
  /** Judgements under way, by node id and attestation hash: one worker task per member and attestation. */
  private final Map<String, Future<BusTrust.Verdict>> judging = new ConcurrentHashMap<>();
  /** Per address, the last update not yet passed on: updates of one address pass on in the order they came. */
  private final Map<String, Future<Void>> updating = new ConcurrentHashMap<>();
  /** Addresses with a recheck waiting: one at a time per address. */
  private final Set<String> rechecking = ConcurrentHashMap.newKeySet();
  private static final int RECHECKS = 30;
  private static final long RECHECK_MILLIS = 1000;
  /** Set once, before the join (init, registrationListener), then only read. */
  private volatile Vertx vertx;
  private volatile RegistrationListener listener;

  AttestedClusterManager(ClusterManager delegate, BusTrust trust) {
    this.delegate = delegate;
    this.trust = trust;
  }

  @Override
  public void setNodeInfo(NodeInfo nodeInfo, Completable<Void> promise) {
    JsonObject metadata = nodeInfo.metadata() == null ? new JsonObject() : nodeInfo.metadata().copy();
    metadata.put(BusTrust.ATTESTATION, trust.attest(getNodeId(), nodeInfo.host(), nodeInfo.port()));
    delegate.setNodeInfo(new NodeInfo(nodeInfo.host(), nodeInfo.port(), metadata), promise);
  }

  /** The node info of a proven member only: the bus never connects to the address an unproven one gives. */
  @Override
  public void getNodeInfo(String nodeId, Completable<NodeInfo> promise) {
    Promise<NodeInfo> info = Promise.promise();
    delegate.getNodeInfo(nodeId, info);
    info.future().compose(i -> nodeId.equals(getNodeId()) ? Future.succeededFuture(i) : judge(nodeId, i)
        .compose(proved -> proved ? Future.succeededFuture(i) : Future.<NodeInfo>failedFuture(
            "cluster member " + nodeId + " proves no certificate of the cluster CA")))
        .onComplete(promise);
  }

  @Override
  public void getRegistrations(String address, Completable<List<RegistrationInfo>> promise) {
    Promise<List<RegistrationInfo>> all = Promise.promise();
    delegate.getRegistrations(address, all);
    all.future().compose(regs -> judged(address, regs)).onSuccess(j -> {
      if (j.unsure()) {
        recheck(address, RECHECKS);
      }
    }).map(Judged::kept).onComplete(promise);
  }

  @Override
  public void registrationListener(RegistrationListener listener) {
    this.listener = listener;
    delegate.registrationListener(new RegistrationListener() {
      @Override
      public void registrationsUpdated(RegistrationUpdateEvent event) {
        update(event.address(), () -> Future.succeededFuture(event.registrations()), RECHECKS);
      }

      @Override
      public void registrationsLost() {
        listener.registrationsLost();
      }

      @Override
      public boolean wantsUpdatesFor(String address) {
        return listener.wantsUpdatesFor(address);
      }
    });
  }

  /**
   * Passes an address's registrations on, after the ones that came before, with unproven members left out. A
   * recheck reads them in its turn (read), so a list read earlier never overwrites one that came in between.
   */
  private void update(String address, Supplier<Future<List<RegistrationInfo>>> read, int rechecks) {
    Future<Void> passed = updating.compute(address, (a, before) -> (before == null ? Future.<Void>succeededFuture()
        : before).transform(x -> read.get()).compose(regs -> judged(address, regs)).map(j -> {
          listener.registrationsUpdated(new RegistrationUpdateEvent(address, j.kept()));
          if (j.unsure() && rechecks > 0) {
            recheck(address, rechecks - 1);
          }
          return null;
        }));
    passed.onComplete(x -> updating.remove(address, passed));
  }

  /**
   * A member whose node info was not there (after a merge, Hazelcast puts node info back while the consumers may
   * still be listed): the address is looked at again a second later, as no registration change may come to do it.
   * One recheck waits per address at a time.
   */
  private void recheck(String address, int left) {
    if (!rechecking.add(address)) {
      return;
    }
    vertx.setTimer(RECHECK_MILLIS, t -> {
      rechecking.remove(address);
      if (listener.wantsUpdatesFor(address)) {
        update(address, () -> {
          Promise<List<RegistrationInfo>> now = Promise.promise();
          delegate.getRegistrations(address, now);
          return now.future();
        }, left);
      }
    });
  }

  @Override
  public void nodeListener(NodeListener listener) {
    delegate.nodeListener(new NodeListener() {
      @Override
      public void nodeAdded(String nodeId) {
        listener.nodeAdded(nodeId);
      }

      @Override
      public void nodeLeft(String nodeId) {
        proven.remove(nodeId);
        refused.keySet().removeIf(k -> k.startsWith(nodeId + "\n"));
        listener.nodeLeft(nodeId);
      }
    });
  }

  /**
   * The registrations of this member and of proven members (on conveyor.* addresses, of proven nodes); the node
   * info of others is read and judged first.
   */
  private Future<Judged> judged(String address, List<RegistrationInfo> registrations) {
    String self = getNodeId();
    List<Future<Boolean>> verdicts = registrations.stream().map(RegistrationInfo::nodeId).distinct()
        .filter(id -> !id.equals(self) && proof(id) == null).map(this::judge).toList();
    boolean nodesOnly = address.startsWith(NODE_ADDRESSES);
    return Future.join(verdicts).transform(x -> Future.succeededFuture(new Judged(registrations.stream()
        .filter(r -> r.nodeId().equals(self) || kept(proof(r.nodeId()), nodesOnly)).toList(),
        verdicts.stream().anyMatch(Future::failed))));
  }

  private static boolean kept(BusTrust.Verdict proof, boolean nodesOnly) {
    return proof != null && (proof.node() || !nodesOnly);
  }

  /** A member's proof while its certificates are valid; past their notAfter it is forgotten, to be judged again. */
  private BusTrust.Verdict proof(String nodeId) {
    BusTrust.Verdict proof = proven.get(nodeId);
    if (proof != null && !trust.now().isBefore(proof.notAfter())) {
      proven.remove(nodeId, proof);
      return null;
    }
    return proof;
  }

  /** What is passed on, and whether a member was left out for want of node info (not for a bad one). */
  private record Judged(List<RegistrationInfo> kept, boolean unsure) {
  }

  /** Reads a member's node info and judges it; fails when the member has none (yet, or any more). */
  private Future<Boolean> judge(String nodeId) {
    Promise<NodeInfo> info = Promise.promise();
    delegate.getNodeInfo(nodeId, info);
    return info.future().compose(i -> judge(nodeId, i));
  }

  /**
   * Whether the member proves a certificate of the CA: known at once when it is proven or refused with this
   * attestation lately; else judged on a worker (PKIX and a signature over a chain the member chose).
   */
  private Future<Boolean> judge(String nodeId, NodeInfo info) {
    if (proof(nodeId) != null) {
      return Future.succeededFuture(true);
    }
    String key = nodeId + "\n" + digest(info);
    Instant at = refused.get(key);
    if (at != null && trust.now().isBefore(at.plus(REFUSAL_TTL))) {
      return Future.succeededFuture(false);
    }
    Future<BusTrust.Verdict> verdict = judging.computeIfAbsent(key, k -> {
      Future<BusTrust.Verdict> v = vertx.executeBlocking(() -> trust.verdict(nodeId, info), false);
      v.onComplete(x -> judging.remove(k));
      return v;
    });
    return verdict.map(v -> {
      if (v.refusal() == null) {
        if (proven.put(nodeId, v) == null) {
          expire(nodeId, v);
        }
        return true;
      }
      if (refused.size() >= MAX_REFUSALS) {
        refused.clear(); // a flood of fabricated members: forget them all rather than grow
      }
      if (refused.put(key, trust.now()) == null) {
        log.warn("cluster member {} at {}:{} is not routed to: {}", nodeId, info.host(), info.port(), v.refusal());
      }
      return false;
    });
  }

  /**
   * When a proof's certificate expires, the bus forgets every address's consumers (registrationsLost) and asks again,
   * so the member is judged again rather than routed to by what the bus remembers.
   */
  private void expire(String nodeId, BusTrust.Verdict proof) {
    long millis = Duration.between(trust.now(), proof.notAfter()).toMillis();
    vertx.setTimer(Math.max(1, millis), t -> {
      if (proven.remove(nodeId, proof)) {
        listener.registrationsLost();
      }
    });
  }

  /** A member's node info as a cache key: what its verdict depends on (its address and attestation). */
  private static String digest(NodeInfo info) {
    JsonObject attestation = BusTrust.attestation(info);
    String text = info.host() + "\n" + info.port() + "\n" + (attestation == null ? "" : attestation.encode());
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The cluster manager this one wraps. */
  ClusterManager delegate() {
    return delegate;
  }

  // the rest is Hazelcast's, as it is

  @Override
  public void init(Vertx vertx) {
    this.vertx = vertx;
    delegate.init(vertx);
  }

  @Override
  public <K, V> void getAsyncMap(String name, Completable<AsyncMap<K, V>> promise) {
    delegate.getAsyncMap(name, promise);
  }

  @Override
  public <K, V> Map<K, V> getSyncMap(String name) {
    return delegate.getSyncMap(name);
  }

  @Override
  public void getLockWithTimeout(String name, long timeout, Completable<Lock> promise) {
    delegate.getLockWithTimeout(name, timeout, promise);
  }

  @Override
  public void getCounter(String name, Completable<Counter> promise) {
    delegate.getCounter(name, promise);
  }

  @Override
  public void join(Completable<Void> promise) {
    delegate.join(promise);
  }

  @Override
  public void leave(Completable<Void> promise) {
    delegate.leave(promise);
  }

  @Override
  public boolean isActive() {
    return delegate.isActive();
  }

  @Override
  public void addRegistration(String address, RegistrationInfo registrationInfo, Completable<Void> promise) {
    delegate.addRegistration(address, registrationInfo, promise);
  }

  @Override
  public void removeRegistration(String address, RegistrationInfo registrationInfo, Completable<Void> promise) {
    delegate.removeRegistration(address, registrationInfo, promise);
  }

  @Override
  public String clusterHost() {
    return delegate.clusterHost();
  }

  @Override
  public String clusterPublicHost() {
    return delegate.clusterPublicHost();
  }

  @Override
  public String getNodeId() {
    return delegate.getNodeId();
  }

  @Override
  public NodeInfo getNodeInfo() {
    return delegate.getNodeInfo();
  }

  @Override
  public List<String> getNodes() {
    return delegate.getNodes();
  }
}
