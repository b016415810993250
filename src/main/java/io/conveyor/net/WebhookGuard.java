package io.conveyor.net;

import io.conveyor.config.Config;
import io.conveyor.model.TxException;
import io.vertx.core.Future;
import java.net.URI;

/** The outbound guard for webhook URLs: a refusal names the field webhook. */
public final class WebhookGuard {
  private WebhookGuard() {
  }

  /** Succeeds when the URL may be called; else fails with a refusal naming the field webhook. */
  public static Future<Void> check(URI url, Config.Webhooks settings) {
    return of(settings).check(url).recover(e -> Future.failedFuture(e instanceof OutboundGuard.Refused r
        ? TxException.invalid("webhook", r.getMessage()) : e));
  }

  /** The guard webhooks.allowPrivateTargets and webhooks.allowHosts describe. */
  public static OutboundGuard of(Config.Webhooks settings) {
    return new OutboundGuard(settings.allowPrivateTargets(), settings.allowHosts());
  }
}
