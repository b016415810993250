package io.conveyor.pipeline.steps;

import io.vertx.core.Future;
import java.net.URI;

/**
 * What an http/request step asks before it calls out: may this URL be called? net/OutboundGuard answers it for
 * a node (the same guard as webhooks); pipeline/ owns the question so it depends on nothing but model.
 */
public interface Outbound {
  /** Until a node gives its guard (StepRegistry.outbound, at start), no target may be called. */
  Outbound NONE = url -> Future.failedFuture(new Refused("refused: no outbound guard is set for http/request "
      + "steps (a node sets one at start from webhooks.allowPrivateTargets and webhooks.allowHosts)"));

  /** Succeeds when the URL may be called; else fails with Refused (or Unresolved), saying why. */
  Future<Void> check(URI url);

  /** Why a URL may not be called: what a caller shows (a refusal, or a failed step). */
  class Refused extends RuntimeException {
    public Refused(String message) {
      super(message, null, false, false);
    }
  }

  /** The host name did not resolve: a refusal for a webhook URL, but for a step a failure worth retrying. */
  final class Unresolved extends Refused {
    public Unresolved(String host) {
      super("cannot resolve the host " + host + " (DNS); check its spelling, or retry once DNS answers");
    }
  }
}
