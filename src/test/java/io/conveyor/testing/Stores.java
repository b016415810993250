package io.conveyor.testing;

import io.conveyor.redis.ArchiveHandoff;
import io.conveyor.redis.ControlStore;
import io.conveyor.redis.LivenessStore;
import io.conveyor.redis.OwnerStore;
import io.conveyor.redis.PipelineStore;
import io.conveyor.redis.QuarantineStore;
import io.conveyor.redis.QueueStore;
import io.conveyor.redis.ReadStore;
import io.conveyor.redis.RunStore;
import io.conveyor.redis.StatsStore;
import io.conveyor.redis.StoreContext;
import io.conveyor.redis.WebhookStore;

/** Every store on one context, as the node's verticles build them, for tests to act and look through. */
public final class Stores {
  public final StoreContext context;
  public final QueueStore queue;
  public final RunStore run;
  public final ControlStore control;
  public final LivenessStore liveness;
  public final ArchiveHandoff archive;
  public final WebhookStore webhooks;
  public final ReadStore reads;
  public final StatsStore stats;
  public final PipelineStore pipelines;
  public final OwnerStore owners;
  public final QuarantineStore quarantine;

  public Stores(StoreContext context) {
    this.context = context;
    this.queue = new QueueStore(context);
    this.run = new RunStore(context);
    this.control = new ControlStore(context);
    this.liveness = new LivenessStore(context);
    this.archive = new ArchiveHandoff(context);
    this.webhooks = new WebhookStore(context);
    this.reads = new ReadStore(context);
    this.stats = new StatsStore(context);
    this.pipelines = new PipelineStore(context);
    this.owners = new OwnerStore(context);
    this.quarantine = new QuarantineStore(context);
  }
}
