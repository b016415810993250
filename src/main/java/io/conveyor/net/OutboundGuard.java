package io.conveyor.net;

import io.conveyor.pipeline.steps.Outbound;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Locale;

/**
 * Keeps outbound calls (webhooks, http/request steps) off addresses a caller should not reach through us:
 * loopback, private, link-local (which holds the cloud metadata address 169.254.169.254), carrier-grade NAT,
 * unique-local IPv6, multicast and unspecified addresses, checked on every address the host name resolves
 * to. allowPrivateTargets turns the check off; allowHosts lets named hosts through (webhooks.allowPrivateTargets
 * and webhooks.allowHosts in config).
 */
public record OutboundGuard(boolean allowPrivateTargets, List<String> allowHosts) implements Outbound {
  /** Succeeds when the URL may be called; else fails with Refused (Outbound's), saying why. */
  @Override
  public Future<Void> check(URI url) {
    String host = url.getHost() == null ? "" : url.getHost().toLowerCase(Locale.ROOT);
    String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (allowPrivateTargets || allowHosts.contains(host) || allowHosts.contains(bare)) {
      return Future.succeededFuture();
    }
    Context ctx = Vertx.currentContext();
    if (ctx == null) {
      try {
        return Future.succeededFuture(refusal(bare, InetAddress.getAllByName(bare)));
      } catch (UnknownHostException e) {
        return Future.failedFuture(new Unresolved(bare));
      } catch (Refused e) {
        return Future.failedFuture(e);
      }
    }
    // name resolution may block: a worker thread does it
    return ctx.owner().<InetAddress[]>executeBlocking(() -> InetAddress.getAllByName(bare), false)
        .recover(e -> Future.failedFuture(new Unresolved(bare)))
        .compose(all -> Future.succeededFuture(refusal(bare, all)));
  }

  private static Void refusal(String host, InetAddress[] all) {
    for (InetAddress a : all) {
      if (!isPublic(a)) {
        throw new Refused("refused: " + host + " is " + a.getHostAddress()
            + ", a loopback, private, link-local or otherwise internal address (allow it with "
            + "webhooks.allowHosts or webhooks.allowPrivateTargets)");
      }
    }
    return null;
  }

  /** True for an address on the public internet. */
  public static boolean isPublic(InetAddress a) {
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
