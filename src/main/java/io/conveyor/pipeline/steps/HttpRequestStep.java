package io.conveyor.pipeline.steps;

import io.conveyor.pipeline.Step;
import io.conveyor.pipeline.StepContext;
import io.conveyor.pipeline.StepResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * http/request: calls a service. params: url (required), method (default GET, or POST when a body is given),
 * headers, body (a JSON template; without it POST, PUT and PATCH send the step's input), successStatus
 * (default ["2xx"]) and retryableStatus (default ["5xx", 408, 429]). Strings in url, headers and body may
 * hold placeholders (see Template). The response becomes the output {status, body} (body: JSON when the
 * service says so, else text); a status outside successStatus fails the step with code http-<status>,
 * retryable when listed in retryableStatus (a Retry-After is then the least wait). The request goes out
 * under the step's timeout with the step's idempotency key (StepContext.idempotencyKey) in the header
 * params.idempotencyHeader (default Idempotency-Key; "" sends none), through the same outbound guard as webhooks.
 */
public final class HttpRequestStep extends BuiltInStep {
  private static final Set<String> PARAMS = Set.of("url", "method", "headers", "body", "successStatus",
      "retryableStatus", "idempotencyHeader");
  static final String IDEMPOTENCY_HEADER = "Idempotency-Key";
  private static final int MAX_BODY = 1 << 20;
  private final Outbound guard;
  private final Map<Vertx, WebClient> clients = new ConcurrentHashMap<>();

  public HttpRequestStep(Outbound guard) {
    super("http/request", PARAMS);
    this.guard = guard;
  }

  @Override
  Step step(JsonObject params) {
    Template url = Template.of(Params.text(params, "url", null), "params.url");
    HttpMethod method = method(params);
    Map<String, Template> headers = headers(params);
    String keyHeader = idempotencyHeader(params);
    Object body = params.getValue("body");
    if (body != null) {
      Template.check(body, "params.body");
    }
    StatusSet success = StatusSet.of(params.getValue("successStatus", new JsonArray().add("2xx")), "successStatus");
    StatusSet retryable = StatusSet.of(params.getValue("retryableStatus", new JsonArray().add("5xx").add(408)
        .add(429)), "retryableStatus");
    boolean sendsInput = body == null && (method == HttpMethod.POST || method == HttpMethod.PUT
        || method == HttpMethod.PATCH);
    return ctx -> {
      String target;
      Map<String, String> head = new LinkedHashMap<>();
      Object payload;
      try {
        target = url.render(ctx, true);
        headers.forEach((name, value) -> head.put(name, value.render(ctx, false)));
        payload = body != null ? Template.fill(body, ctx) : sendsInput ? ctx.input() : null;
      } catch (Template.Missing e) {
        return Future.succeededFuture(new StepResult.Failed(e.getMessage(), null, "invalid-input", false, null));
      }
      URI uri;
      try {
        uri = URI.create(target);
        if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
          throw new IllegalArgumentException("expected an http or https URL with a host");
        }
      } catch (IllegalArgumentException e) {
        return Future.succeededFuture(new StepResult.Failed("url " + target + ": " + e.getMessage(), null,
            "invalid-input", false, null));
      }
      return guard.check(uri)
          .compose(ok -> send(ctx, method, target, keyHeader, head, payload))
          .map(response -> result(response, success, retryable))
          .recover(e -> Future.succeededFuture(failure(e, method + " " + target)));
    };
  }

  /**
   * A call that got no answer: a host that does not resolve (now, or when the client connects: allowed hosts skip
   * the guard's lookup) is http-dns and retried like http-connect, since DNS failures pass; http-refused is only a
   * target the guard forbids, which no retry changes.
   */
  private static StepResult failure(Throwable e, String call) {
    if (e instanceof Outbound.Unresolved || unresolved(e)) {
      return new StepResult.Failed(call + " failed: " + e.getMessage(), null, "http-dns", true, null);
    }
    if (e instanceof Outbound.Refused) {
      return new StepResult.Failed(e.getMessage(), null, "http-refused", false, null);
    }
    return new StepResult.Failed(call + " failed: " + e.getMessage(), null, "http-connect", true, null);
  }

  private static boolean unresolved(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof UnknownHostException) {
        return true;
      }
    }
    return false;
  }

  private Future<HttpResponse<Buffer>> send(StepContext ctx, HttpMethod method, String target, String keyHeader,
                                            Map<String, String> headers, Object payload) {
    WebClient client = clients.computeIfAbsent(ctx.vertx(), v -> WebClient.create(v, new WebClientOptions()
        .setUserAgent("conveyor").setFollowRedirects(false)));
    HttpRequest<Buffer> request = client.requestAbs(method, target).timeout(ctx.timeout().toMillis());
    if (!keyHeader.isEmpty()) {
      request.putHeader(keyHeader, ctx.idempotencyKey()); // params.headers may still set it: theirs wins
    }
    if (ctx.traceparent() != null) {
      request.putHeader("traceparent", ctx.traceparent()); // the step's span: the callee's work hangs under it
    }
    headers.forEach(request::putHeader);
    if (payload == null) {
      return request.send();
    }
    if (!headers.keySet().stream().anyMatch(h -> h.equalsIgnoreCase("content-type"))) {
      request.putHeader("Content-Type", "application/json");
    }
    return request.sendBuffer(Buffer.buffer(Json.encode(payload)));
  }

  private static StepResult result(HttpResponse<Buffer> response, StatusSet success, StatusSet retryable) {
    int status = response.statusCode();
    Buffer raw = response.body();
    if (raw != null && raw.length() > MAX_BODY) {
      return new StepResult.Failed("the response body is " + raw.length() + " bytes; at most " + MAX_BODY
          + " are kept", null, "http-too-large", false, null);
    }
    JsonObject output = new JsonObject().put("status", status).put("body", body(response, raw));
    if (success.contains(status)) {
      return StepResult.success(output);
    }
    String note = "the service answered " + status + (response.statusMessage() == null ? ""
        : " " + response.statusMessage());
    return new StepResult.Failed(note, output, "http-" + status, retryable.contains(status),
        retryAfter(response.getHeader("Retry-After"), response.getHeader("Date")));
  }

  /** JSON when the service says it is (and it parses), else text; null when there is none. */
  private static Object body(HttpResponse<Buffer> response, Buffer raw) {
    if (raw == null || raw.length() == 0) {
      return null;
    }
    String type = String.valueOf(response.getHeader("Content-Type")).toLowerCase(Locale.ROOT);
    if (type.contains("json")) {
      try {
        return Json.decodeValue(raw);
      } catch (RuntimeException notJson) {
        return raw.toString();
      }
    }
    return raw.toString();
  }

  /**
   * Retry-After as seconds, or as an HTTP date counted from the answer's own Date (the service's clock, not
   * ours); null when absent or unreadable; at most a day.
   */
  static Duration retryAfter(String header, String date) {
    if (header == null || header.isBlank()) {
      return null;
    }
    try {
      DateTimeFormatter http = DateTimeFormatter.RFC_1123_DATE_TIME;
      long seconds = header.trim().matches("\\d+") ? Long.parseLong(header.trim())
          : Duration.between(ZonedDateTime.parse(date.trim(), http),
              ZonedDateTime.parse(header.trim(), http)).toSeconds();
      return Duration.ofSeconds(Math.max(0, Math.min(seconds, 86_400)));
    } catch (RuntimeException unreadable) {
      return null;
    }
  }

  private static HttpMethod method(JsonObject params) {
    String m = Params.text(params, "method", params.containsKey("body") ? "POST" : "GET");
    if (!List.of("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD").contains(m)) {
      throw new IllegalArgumentException("params.method: expected GET, POST, PUT, PATCH, DELETE or HEAD, got " + m);
    }
    return HttpMethod.valueOf(m);
  }

  /** The header the idempotency key goes in: params.idempotencyHeader, a header name or "" (none). */
  private static String idempotencyHeader(JsonObject params) {
    Object v = params.getValue("idempotencyHeader", IDEMPOTENCY_HEADER);
    if (!(v instanceof String h) || !(h.isEmpty() || h.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+"))) {
      throw new IllegalArgumentException("params.idempotencyHeader: expected a header name (or \"\" to send no "
          + "idempotency key), got " + v);
    }
    return h;
  }

  private static Map<String, Template> headers(JsonObject params) {
    Object raw = params.getValue("headers", new JsonObject());
    if (!(raw instanceof JsonObject h)) {
      throw new IllegalArgumentException("params.headers: expected an object of header names and string values");
    }
    Map<String, Template> out = new LinkedHashMap<>();
    for (String name : h.fieldNames()) {
      if (!name.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+")) {
        throw new IllegalArgumentException("params.headers: '" + name + "' is not a header name");
      }
      if (!(h.getValue(name) instanceof String v)) {
        throw new IllegalArgumentException("params.headers." + name + ": expected a string");
      }
      out.put(name, Template.of(v, "params.headers." + name));
    }
    return out;
  }

  /** Status codes as listed in params: whole codes (404) and classes ("5xx"). */
  private record StatusSet(Set<Integer> codes, Set<Integer> classes) {
    static StatusSet of(Object raw, String name) {
      if (!(raw instanceof JsonArray a)) {
        throw new IllegalArgumentException("params." + name + ": expected a list of status codes (404) or classes "
            + "(\"5xx\")");
      }
      Set<Integer> codes = new HashSet<>();
      Set<Integer> classes = new HashSet<>();
      for (Object v : a) {
        if (v instanceof Integer c && c >= 100 && c <= 599) {
          codes.add(c);
        } else if (v instanceof String s && s.matches("[1-5]xx")) {
          classes.add(s.charAt(0) - '0');
        } else {
          throw new IllegalArgumentException("params." + name + ": expected status codes from 100 to 599 or classes "
              + "such as \"5xx\", got " + v);
        }
      }
      return new StatusSet(Set.copyOf(codes), Set.copyOf(classes));
    }

    boolean contains(int status) {
      return codes.contains(status) || classes.contains(status / 100);
    }
  }
}
