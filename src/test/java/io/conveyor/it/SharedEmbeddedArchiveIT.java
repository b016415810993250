package io.conveyor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.NodeProcess;
import io.conveyor.testing.TestCluster;
import io.conveyor.testing.TestRedis;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Two node processes share the default kind of archive, an embedded H2 file, which the first to open it
 * serves to the other. Killing that first node must not leave the other answering "Database is already
 * closed" for ever: it opens the file again, archives on, and reads what was archived before; the killed
 * node, started again, archives with no manual step.
 */
class SharedEmbeddedArchiveIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private final String prefix = TestRedis.newPrefix();

  @Test
  void when_the_node_serving_the_file_dies_the_other_recovers_and_nothing_archived_is_lost() throws Exception {
    Path dir = Files.createTempDirectory("shared-archive");
    Map<String, String> env = new HashMap<>(Map.of("CONVEYOR_REDIS_URL", TestRedis.url(),
        "CONVEYOR_REDIS_PREFIX", prefix, "CONVEYOR_CLUSTER_NAME", TestCluster.newName(),
        "CONVEYOR_ARCHIVE_URL", "h2:" + dir.resolve("archive"), "CONVEYOR_ARCHIVE_DELAY", "0s",
        "CONVEYOR_API_KEYS", "acme:client:k-acme", "CONVEYOR_HEARTBEAT_TTL", "3s"));
    int port1 = TestRedis.freePort();
    int port2 = TestRedis.freePort();
    try (NodeProcess one = NodeProcess.start("shared-h2-1", with(env, port1));
         NodeProcess two = startAfter(one, env, port2)) {
      List<String> before = startAll(port2, 20);
      awaitArchived(before);

      one.kill();
      List<String> after = startAll(port2, 20);
      awaitArchived(after);
      for (String id : before) {
        assertEquals("success", status(port2, id).getString("status"), id + " read from the archive");
      }
      Eventually.until(Duration.ofSeconds(30), "the surviving node to be ready",
          () -> get(port2, "/health/ready").statusCode(), code -> code == 200);

      try (NodeProcess again = NodeProcess.start("shared-h2-1b", with(env, port1))) {
        again.awaitLine(" started: group master", Duration.ofSeconds(90));
        List<String> more = startAll(port1, 20);
        awaitArchived(more);
        for (String id : before) {
          assertEquals("success", status(port1, id).getString("status"));
        }
      }
    } finally {
      TestRedis.drop(prefix);
    }
  }

  private static NodeProcess startAfter(NodeProcess first, Map<String, String> env, int port) throws Exception {
    first.awaitLine(" started: group master", Duration.ofSeconds(90));
    NodeProcess second = NodeProcess.start("shared-h2-2", with(env, port));
    second.awaitLine(" started: group master", Duration.ofSeconds(90));
    return second;
  }

  private static Map<String, String> with(Map<String, String> env, int httpPort) {
    Map<String, String> m = new HashMap<>(env);
    m.put("CONVEYOR_HTTP_PORT", Integer.toString(httpPort));
    return m;
  }

  /** Starts n example transactions and waits for each to succeed. */
  private static List<String> startAll(int port, int n) throws Exception {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
              + "/api/v1/transactions?wait=10")).header("Authorization", "Bearer k-acme")
          .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
              new JsonObject().put("type", "example").put("input", new JsonObject().put("name", "n" + i)).encode()))
          .build(), HttpResponse.BodyHandlers.ofString());
      JsonObject body = new JsonObject(r.body());
      assertEquals("success", body.getString("status"), r.body());
      ids.add(body.getString("txId"));
    }
    return ids;
  }

  /** Archived means gone from Redis: the archive confirmed it. */
  private void awaitArchived(List<String> ids) {
    Eventually.until(Duration.ofSeconds(30), ids.size() + " transactions to be archived",
        () -> ids.stream().filter(id -> TestRedis.cmd("EXISTS", prefix + "stateH:" + id).toInteger() == 1).count(),
        left -> left == 0);
  }

  private static JsonObject status(int port, String txId) throws Exception {
    HttpResponse<String> r = get(port, "/api/v1/transactions/" + txId);
    assertEquals(200, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }

  private static HttpResponse<String> get(int port, String path) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .header("Authorization", "Bearer k-acme").build(), HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
