package io.conveyor.pipeline;

import io.conveyor.pipeline.steps.ChildPipelineStep;
import io.conveyor.pipeline.steps.ClusterChanges;
import io.conveyor.pipeline.steps.DelayStep;
import io.conveyor.pipeline.steps.EventBusStep;
import io.conveyor.pipeline.steps.FailStep;
import io.conveyor.pipeline.steps.FixedReplyStep;
import io.conveyor.pipeline.steps.FlowAwaitStep;
import io.conveyor.pipeline.steps.HttpRequestStep;
import io.conveyor.pipeline.steps.Outbound;
import io.conveyor.pipeline.steps.ParallelStep;
import io.conveyor.pipeline.steps.WaitStep;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/** Step types by name. Built-ins are registered by {@link #withBuiltIns()}; an application adds its own. */
public final class StepRegistry {
  private final Map<String, StepType> types = new ConcurrentHashMap<>();

  /** The built-in steps; http/request calls nothing until a node gives its outbound guard (see outbound). */
  public static StepRegistry withBuiltIns() {
    return new StepRegistry().register(new FixedReplyStep()).register(new DelayStep()).register(new FailStep())
        .register(new EventBusStep(ClusterChanges.NONE)).register(new ChildPipelineStep()).register(new WaitStep())
        .register(new HttpRequestStep(Outbound.NONE)).register(new ParallelStep())
        .register(new FlowAwaitStep());
  }

  /**
   * The built-in http/request step with this outbound guard (a node's webhooks.allowPrivateTargets and
   * webhooks.allowHosts: net/OutboundGuard), in place of none; pipelines compiled after this use it.
   */
  public StepRegistry outbound(Outbound guard) {
    types.put("http/request", new HttpRequestStep(guard));
    return this;
  }

  /**
   * The built-in eventbus step with this node's cluster view (lease/ClusterView), in place of none: a request that
   * gets no answer while the view changes is tried again; pipelines compiled after this use it.
   */
  public StepRegistry clusterChanges(ClusterChanges changes) {
    types.put("eventbus", new EventBusStep(changes));
    return this;
  }

  public StepRegistry register(StepType type) {
    if (types.putIfAbsent(type.name(), type) != null) {
      throw new IllegalArgumentException("step type " + type.name() + " is registered already");
    }
    return this;
  }

  public Set<String> names() {
    return Set.copyOf(types.keySet());
  }

  /** A configured step; IllegalArgumentException when the type is unknown or its params are wrong. */
  public Step create(String type, JsonObject params) {
    StepType t = types.get(type);
    if (t == null) {
      throw new IllegalArgumentException("unknown step type '" + type + "' (known: " + String.join(", ",
          new TreeSet<>(types.keySet())) + ")");
    }
    return t.create(params);
  }
}
