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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster manager as the event bus sees it when bus TLS is on (docs/decisions.md, "A rogue member gets nothing"):
 * Hazelcast's, except that this member's node info carries its attestation, and a registration (a consumer) of a
 * member whose node info does not verify against the cluster CA is left out of what the bus routes by, both when the
 * bus asks for an address's consumers and when the consumers change. Open-source Hazelcast lets anyone join and
 * write its maps; this keeps such a member from receiving a share of the cluster's requests. A member's verdict is
 * kept once it proved itself (node ids are never reused) and forgotten when it leaves; a refused one is asked again.
 * Vert.x calls this from its event loops and from Hazelcast's threads: its state is concurrent maps only.
 */
final class AttestedClusterManager implements ClusterManager {
  private static final Logger log = LoggerFactory.getLogger(AttestedClusterManager.class);
  private final ClusterManager delegate;
  private final BusTrust trust;
  private final Set<String> proven = ConcurrentHashMap.newKeySet();
  private final Set<String> refused = ConcurrentHashMap.newKeySet();
  /** Per address, the last update not yet passed on: updates of one address pass on in the order they came. */
  private final Map<String, Future<Void>> updating = new ConcurrentHashMap<>();
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
    info.future().compose(i -> nodeId.equals(getNodeId()) || judge(nodeId, i) ? Future.succeededFuture(i)
        : Future.<NodeInfo>failedFuture("cluster member " + nodeId + " proves no certificate of the cluster CA"))
        .onComplete(promise);
  }

  @Override
  public void getRegistrations(String address, Completable<List<RegistrationInfo>> promise) {
    Promise<List<RegistrationInfo>> all = Promise.promise();
    delegate.getRegistrations(address, all);
    all.future().compose(this::judged).onSuccess(j -> {
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
        update(event.address(), event.registrations(), RECHECKS);
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

  /** Passes an address's registrations on, after the ones that came before, with unproven members left out. */
  private void update(String address, List<RegistrationInfo> registrations, int rechecks) {
    Future<Void> passed = updating.compute(address, (a, before) -> (before == null ? Future.<Void>succeededFuture()
        : before).transform(x -> judged(registrations)).map(j -> {
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
   */
  private void recheck(String address, int left) {
    vertx.setTimer(RECHECK_MILLIS, t -> {
      if (listener.wantsUpdatesFor(address)) {
        Promise<List<RegistrationInfo>> now = Promise.promise();
        delegate.getRegistrations(address, now);
        now.future().onSuccess(regs -> update(address, regs, left));
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
        refused.remove(nodeId);
        listener.nodeLeft(nodeId);
      }
    });
  }

  /** The registrations of this member and of proven members; the node info of others is read and judged first. */
  private Future<Judged> judged(List<RegistrationInfo> registrations) {
    String self = getNodeId();
    List<Future<Boolean>> verdicts = registrations.stream().map(RegistrationInfo::nodeId).distinct()
        .filter(id -> !id.equals(self) && !proven.contains(id)).map(this::judge).toList();
    return Future.join(verdicts).transform(x -> Future.succeededFuture(new Judged(registrations.stream()
        .filter(r -> r.nodeId().equals(self) || proven.contains(r.nodeId())).toList(),
        verdicts.stream().anyMatch(Future::failed))));
  }

  /** What is passed on, and whether a member was left out for want of node info (not for a bad one). */
  private record Judged(List<RegistrationInfo> kept, boolean unsure) {
  }

  /** Reads a member's node info and judges it; fails when the member has none (yet, or any more). */
  private Future<Boolean> judge(String nodeId) {
    Promise<NodeInfo> info = Promise.promise();
    delegate.getNodeInfo(nodeId, info);
    return info.future().map(i -> judge(nodeId, i));
  }

  private boolean judge(String nodeId, NodeInfo info) {
    String why = trust.refusal(nodeId, info);
    if (why == null) {
      proven.add(nodeId);
      return true;
    }
    if (refused.add(nodeId)) {
      log.warn("cluster member {} at {}:{} is not routed to: {}", nodeId, info.host(), info.port(), why);
    }
    return false;
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
