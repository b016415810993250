package io.conveyor.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/**
 * A TestNode's HTTP API on a free port with two keys: k-acme (a client of owner acme) and k-ops (an admin), and
 * requests to it with one of them.
 */
public final class KeyedApi {
  public static final String CLIENT = "k-acme";
  public static final String ADMIN = "k-ops";
  private final HttpClient http = HttpClient.newHttpClient();
  private final int port = TestRedis.freePort();

  /** The node, set to serve its HTTP API on this port with the two keys. */
  public TestNode on(TestNode node) {
    return node.set("HTTP_PORT", Integer.toString(port)).set("API_KEYS", "acme:client:k-acme,ops:admin:k-ops");
  }

  /** A request with the key, a JSON body or none (null). */
  public HttpResponse<String> send(String method, String path, String key, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json");
    b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
