package io.conveyor.api;

import static io.conveyor.api.HttpIo.problem;

import io.conveyor.config.Config;
import io.conveyor.config.Names;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What every /api/v1 request passes before its route: the body limit, the API key (its owner and roles), the
 * query parameters the route takes, the role the route needs, and a well-formed ?wait.
 */
public final class ApiGate implements RouteGroup {
  private final Config.Http http;
  private final ApiKeys keys;
  private final AuditHook audit;
  private final boolean auditReads;

  /** audit records every request that needs an admin key (auditReads: GET ones too); null records none. */
  public ApiGate(Config.Http http, ApiKeys keys, AuditLog audit, java.time.Clock clock, boolean auditReads) {
    this.http = http;
    this.keys = keys;
    this.audit = audit == null ? null : new AuditHook(audit, clock);
    this.auditReads = auditReads;
  }

  public ApiGate(Config.Http http, ApiKeys keys) {
    this(http, keys, null, java.time.Clock.systemUTC(), false);
  }

  /**
   * The routes only an admin key may use (/api/v1/events too when the key is admin: it may then act for any owner).
   * ApiGate both requires the admin role of them and records each in the audit log: one list, so a new admin route
   * cannot be left out of the audit.
   */
  public static boolean needsAdmin(String path, ApiKeys.Principal who) {
    return path.startsWith("/api/v1/admin/") || path.equals("/api/v1/admin")
        || path.equals("/api/v1/pipelines") || path.startsWith("/api/v1/pipelines/")
        || path.equals("/api/v1/cluster") || path.equals("/api/v1/stats")
        || path.equals("/api/v1/events") && who.has("admin");
  }

  @Override
  public void mount(Router r) {
    if (audit != null) {
      audit.on(r);
    }
    r.route("/api/v1/*").handler(BodyHandler.create(false).setBodyLimit(http.maxBodyBytes()));
    r.route("/api/v1/*").handler(this::authenticate);
    r.route("/api/v1/*").handler(this::audited);
    r.route("/api/v1/*").handler(ApiGate::knownQuery);
    r.route("/api/v1/transactions*").handler(ctx -> requireRole(ctx, "client"));
    // a bad ?wait is refused before anything is done (a start must not happen and then answer 400)
    r.route("/api/v1/transactions*").handler(ctx -> {
      try {
        HttpIo.waitMillis(ctx, http.maxWait());
        ctx.next();
      } catch (TxException e) {
        problem(ctx, e);
      }
    });
    r.route("/api/v1/events").handler(ctx -> requireRole(ctx, "client", "admin"));
    r.route("/api/v1/*").handler(ctx -> {
      if (needsAdmin(ctx.normalizedPath(), ctx.get(HttpIo.PRINCIPAL))) {
        requireRole(ctx, "admin");
      } else {
        ctx.next();
      }
    });
  }

  /** Before anything may refuse it: a request that needs an admin key is recorded however it ends (AuditHook). */
  private void audited(RoutingContext ctx) {
    ApiKeys.Principal who = ctx.get(HttpIo.PRINCIPAL);
    HttpMethod method = ctx.request().method();
    if (audit != null && needsAdmin(ctx.normalizedPath(), who)
        && (auditReads || method != HttpMethod.GET && method != HttpMethod.HEAD)) {
      audit.watch(ctx, who);
    }
    ctx.next();
  }

  /** The events route takes a client or an admin key. */
  private static void requireRole(RoutingContext ctx, String role, String orRole) {
    ApiKeys.Principal who = ctx.get(HttpIo.PRINCIPAL);
    requireRole(ctx, who.has(orRole) ? orRole : role);
  }

  private void authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader("Authorization");
    String key = header != null && header.startsWith("Bearer ") ? header.substring(7).trim() : null;
    ApiKeys.Principal who = keys.authenticate(key).orElse(null);
    if (who == null) {
      problem(ctx, new TxException(Kind.UNAUTHORIZED, "send Authorization: Bearer <API key>", null, null));
    } else {
      ctx.put(HttpIo.OWNER, who.owner());
      ctx.put(HttpIo.PRINCIPAL, who);
      ctx.next();
    }
  }

  private static void requireRole(RoutingContext ctx, String role) {
    ApiKeys.Principal who = ctx.get(HttpIo.PRINCIPAL);
    if (who.has(role)) {
      ctx.next();
    } else {
      problem(ctx, new TxException(Kind.FORBIDDEN, "this key has no " + role + " role", null, null));
    }
  }

  /** The query parameters each route takes (method, path pattern); a route not listed takes none. */
  private static final List<Map.Entry<Pattern, Set<String>>> QUERIES = List.of(
      query("GET /api/v1/transactions", "externalId", "status", "pipeline", "owner", "from", "to", "q", "limit",
          "cursor"),
      query("POST /api/v1/transactions", "wait"),
      query("GET /api/v1/transactions/[^/]+", "wait"),
      query("POST /api/v1/(admin/)?transactions/[^/]+/retry", "from"),
      query("POST /api/v1/transactions/(pause|resume)", "status", "pipeline", "externalId", "from", "to", "q",
          "limit"),
      query("POST /api/v1/admin/transactions/(pause|resume)", "status", "pipeline", "owner", "externalId", "from",
          "to", "q", "limit"),
      query("DELETE /api/v1/pipelines/[^/]+", "force"),
      query("GET /api/v1/pipelines/[^/]+/graph\\.svg", "version"),
      query("GET /api/v1/stats", "series", "from", "to", "pipeline", "group", "owner"),
      query("GET /api/v1/admin/events", "kind", "node", "subject", "since", "until", "limit"),
      query("GET /api/v1/admin/transactions", "list", "limit", "externalId", "status", "pipeline", "owner", "from",
          "to", "q", "cursor"),
      query("POST /api/v1/admin/pipelines/[^/]+/retry", "since", "until", "status", "from", "limit"),
      query("POST /api/v1/admin/groups/[^/]+/drain", "wait"),
      query("GET /api/v1/admin/archive/quarantine", "cursor", "limit"),
      query("GET /api/v1/admin/stuck", "reason", "owner", "cursor", "limit"),
      query("GET /api/v1/admin/audit", "from", "to", "keyId", "owner", "action", "target", "outcome", "cursor",
          "limit"));

  private static Map.Entry<Pattern, Set<String>> query(String route, String... params) {
    return Map.entry(Pattern.compile(route), Set.of(params));
  }

  /**
   * Refuses a query parameter the route does not take (a misspelt one must not be ignored), and a force that is
   * not true or false; each route checks the type of the ones it takes.
   */
  private static void knownQuery(RoutingContext ctx) {
    MultiMap params = ctx.queryParams();
    if (params.isEmpty()) {
      ctx.next();
      return;
    }
    String route = ctx.request().method().name() + " " + ctx.normalizedPath();
    Set<String> accepted = QUERIES.stream().filter(e -> e.getKey().matcher(route).matches())
        .map(Map.Entry::getValue).findFirst().orElse(Set.of());
    for (String name : params.names()) {
      if (!accepted.contains(name)) {
        problem(ctx, TxException.invalid(name, "unknown query parameter" + Names.suggestion(name, accepted)
            + (accepted.isEmpty() ? "; this route takes none" : "; accepted: " + String.join(", ",
            new TreeSet<>(accepted)))));
        return;
      }
      if (params.getAll(name).size() > 1) {
        problem(ctx, TxException.invalid(name, "given more than once"));
        return;
      }
    }
    String force = params.get("force");
    if (force != null && !force.equals("true") && !force.equals("false")) {
      problem(ctx, TxException.invalid("force", "expected true or false, got " + force));
      return;
    }
    ctx.next();
  }
}
