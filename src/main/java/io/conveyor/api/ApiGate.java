package io.conveyor.api;

import static io.conveyor.api.HttpIo.problem;

import io.conveyor.config.Config;
import io.conveyor.config.Names;
import io.conveyor.model.TxException;
import io.conveyor.model.TxException.Kind;
import io.vertx.core.MultiMap;
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

  public ApiGate(Config.Http http, ApiKeys keys) {
    this.http = http;
    this.keys = keys;
  }

  @Override
  public void mount(Router r) {
    r.route("/api/v1/*").handler(BodyHandler.create(false).setBodyLimit(http.maxBodyBytes()));
    r.route("/api/v1/*").handler(this::authenticate);
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
    r.route("/api/v1/events").handler(ctx -> requireRole(ctx, ((ApiKeys.Principal) ctx.get(HttpIo.PRINCIPAL))
        .has("admin") ? "admin" : "client"));
    r.route("/api/v1/pipelines*").handler(ctx -> requireRole(ctx, "admin"));
    r.route("/api/v1/cluster").handler(ctx -> requireRole(ctx, "admin"));
    r.route("/api/v1/stats").handler(ctx -> requireRole(ctx, "admin"));
    r.route("/api/v1/admin/*").handler(ctx -> requireRole(ctx, "admin"));
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
      query("GET /api/v1/admin/stuck", "reason", "owner", "cursor", "limit"));

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
