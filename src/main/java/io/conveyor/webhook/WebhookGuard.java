package io.conveyor.webhook;

import io.conveyor.config.Config;
import io.conveyor.model.TxException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * Keeps webhooks off addresses a caller should not reach through us: loopback, private, link-local (which
 * holds the cloud metadata address 169.254.169.254), carrier-grade NAT, unique-local IPv6, multicast and
 * unspecified addresses, checked on every address the host name resolves to. webhooks.allowPrivateTargets
 * turns the check off; webhooks.allowHosts lets named hosts through.
 */
public final class WebhookGuard {
  private WebhookGuard() {
  }

  /** Succeeds when the URL may be called; else fails with a refusal naming the field webhook. */
  public static Future<Void> check(URI url, Config.Webhooks settings) {
    String host = url.getHost().toLowerCase(Locale.ROOT);
    String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (settings.allowPrivateTargets() || settings.allowHosts().contains(host) || settings.allowHosts().contains(bare)) {
      return Future.succeededFuture();
    }
    Context ctx = Vertx.currentContext();
    if (ctx == null) {
      try {
        return Future.succeededFuture(refusal(bare, InetAddress.getAllByName(bare)));
      } catch (UnknownHostException e) {
        return Future.failedFuture(unresolved(bare));
      }
    }
    // name resolution may block: a worker thread does it
    return ctx.owner().<InetAddress[]>executeBlocking(() -> InetAddress.getAllByName(bare), false)
        .recover(e -> Future.failedFuture(unresolved(bare)))
        .compose(all -> Future.succeededFuture(refusal(bare, all)));
  }

  private static Void refusal(String host, InetAddress[] all) {
    for (InetAddress a : all) {
      if (!isPublic(a)) {
        throw TxException.invalid("webhook", "refused: " + host + " is " + a.getHostAddress()
            + ", a loopback, private, link-local or otherwise internal address (allow it with "
            + "webhooks.allowHosts or webhooks.allowPrivateTargets)");
      }
    }
    return null;
  }

  private static TxException unresolved(String host) {
    return TxException.invalid("webhook", "cannot resolve the host " + host);
  }

  /** True for an address on the public internet. */
  static boolean isPublic(InetAddress a) {
    if (a.isLoopbackAddress() || a.isSiteLocalAddress() || a.isLinkLocalAddress() || a.isAnyLocalAddress()
        || a.isMulticastAddress()) {
      return false;
    }
    byte[] b = a.getAddress();
    if (a instanceof Inet4Address) {
      int first = b[0] & 0xff;
      int second = b[1] & 0xff;
      return first != 0 && !(first == 100 && second >= 64 && second < 128) // 0/8, 100.64/10 (CGNAT)
          && !(first == 192 && second == 0 && (b[2] & 0xff) == 0) // 192.0.0/24 (IETF protocol assignments)
          && first < 240; // 240/4 reserved and broadcast
    }
    if (a instanceof Inet6Address) {
      if ((b[0] & 0xfe) == 0xfc) {
        return false; // fc00::/7 unique local (fd00:ec2::254 is a cloud metadata address)
      }
      boolean mapped = true; // ::ffff:a.b.c.d carries an IPv4 address
      for (int i = 0; i < 10; i++) {
        mapped &= b[i] == 0;
      }
      if (mapped && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff) {
        try {
          return isPublic(InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]}));
        } catch (UnknownHostException e) {
          return false;
        }
      }
    }
    return true;
  }
}
