package io.conveyor.api;

import io.conveyor.model.AuditEntry;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes the audit entry of an admin request when its answer has gone (ApiGate watches every request that needs an
 * admin key, refused ones included): the action is the route's method and template ("POST
 * /api/v1/admin/groups/:group/pause"), the target its path parameters joined by '/', the parameters a summary
 * (query parameters, the body's size and top-level field names; never a value of the body).
 */
final class AuditHook {
  /** The routing context's key for the problem type HttpIo.problem answered with. */
  static final String PROBLEM = "conveyor.problem";
  private static final int MAX_FIELDS = 50;
  /** The action of the entry that sums up a key's refusals past RefusalBudget.PER_MINUTE in a minute. */
  static final String SUPPRESSED = "admin requests refused past the audit's limit";
  private final AuditLog audit;
  private final Clock clock;
  private final RefusalBudget refusals = new RefusalBudget();
  private io.vertx.ext.web.Router router;
  private List<Template> templates;

  AuditHook(AuditLog audit, Clock clock) {
    this.audit = audit;
    this.clock = clock;
  }

  /** A route's method and path template, and the pattern its paths match. */
  private record Template(HttpMethod method, String path, Pattern pattern) {
  }

  /** The router whose routes name the actions (read at the first request, once every group is mounted). */
  void on(io.vertx.ext.web.Router r) {
    this.router = r;
  }

  /**
   * Records the request once its response has ended (or its connection closed); for a key without the admin role
   * (to be refused), within RefusalBudget's limit only.
   */
  void watch(RoutingContext ctx, ApiKeys.Principal who) {
    long at = clock.millis();
    if (!who.has("admin")) {
      RefusalBudget.Taken t = refusals.take(who.keyId(), at);
      if (t.suppressedBefore() > 0) {
        audit.record(new AuditEntry(0, at, who.keyId(), clean(who.owner()), SUPPRESSED, "", "refused", 403,
            "forbidden", "", "http", audit.node(), new JsonObject().put("suppressed", t.suppressedBefore())
            .put("since", java.time.Instant.ofEpochMilli(t.since()).toString())));
      }
      if (!t.recorded()) {
        audit.suppressed();
        return;
      }
    }
    ctx.addEndHandler(ar -> audit.record(entry(ctx, who, at)));
  }

  private AuditEntry entry(RoutingContext ctx, ApiKeys.Principal who, long at) {
    HttpMethod method = ctx.request().method();
    String path = ctx.normalizedPath();
    String action = method.name() + " (no route)";
    String target = clean(path);
    for (Template t : templates()) {
      Matcher m = t.pattern().matcher(path);
      if ((t.method() == null || t.method().equals(method)) && m.matches()) {
        action = method.name() + " " + t.path();
        List<String> values = new ArrayList<>();
        for (int i = 1; i <= m.groupCount(); i++) {
          values.add(m.group(i));
        }
        target = clean(String.join("/", values));
        break;
      }
    }
    int status = ctx.response().ended() ? ctx.response().getStatusCode() : 499;
    String error = ctx.get(PROBLEM);
    var remote = ctx.request().remoteAddress();
    return new AuditEntry(0, at, who.keyId(), clean(who.owner()), action, target, AuditEntry.outcome(status), status,
        status == 499 ? "closed before the answer" : error, remote == null ? "" : clean(remote.hostAddress()), "http",
        audit.node(), summary(ctx));
  }

  /** The router's routes with a concrete path (no wildcard), once per router. */
  private List<Template> templates() {
    if (templates == null) {
      List<Template> out = new ArrayList<>();
      for (Route r : router.getRoutes()) {
        String p = r.getPath();
        if (p == null || p.contains("*") || !p.startsWith("/api/")) {
          continue;
        }
        String regex = Pattern.quote(p).replaceAll(":[A-Za-z0-9_]+", "\\\\E([^/]+)\\\\Q");
        var methods = r.methods();
        if (methods == null || methods.isEmpty()) {
          out.add(new Template(null, p, Pattern.compile(regex)));
        } else {
          methods.forEach(m -> out.add(new Template(m, p, Pattern.compile(regex))));
        }
      }
      templates = out;
    }
    return templates;
  }

  /** {query: {name: value}, bodyBytes, bodyFields: [names]}: what was asked, not what was sent. */
  private static JsonObject summary(RoutingContext ctx) {
    JsonObject query = new JsonObject();
    ctx.queryParams().names().stream().limit(MAX_FIELDS).forEach(n -> query.put(clean(n), clean(ctx.queryParams()
        .get(n))));
    JsonObject s = new JsonObject().put("query", query);
    int bytes = ctx.body() == null || ctx.body().buffer() == null ? 0 : ctx.body().length();
    s.put("bodyBytes", bytes);
    if (bytes > 0) {
      try {
        List<String> fields = ctx.body().asJsonObject().fieldNames().stream().limit(MAX_FIELDS)
            .map(AuditHook::clean).sorted().toList();
        s.put("bodyFields", fields);
      } catch (RuntimeException e) {
        s.put("bodyFields", List.of()); // not a JSON object: its size alone
      }
    }
    return s;
  }

  /** Text as the audit table holds it (AuditEntry.clean). */
  static String clean(String s) {
    return AuditEntry.clean(s);
  }
}
