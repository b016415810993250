package io.conveyor.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.time.Ticker;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** How the partitions of a role are shared out from the heartbeat's view of the live nodes. */
class AssignmentTest {
  private static JsonObject node(String cluster, String... roles) {
    return new JsonObject().put("roles", new JsonArray(List.of(roles))).put("clusterNodeId", cluster)
        .put("group", "master");
  }

  private static Map<String, JsonObject> view() {
    Map<String, JsonObject> v = new LinkedHashMap<>();
    v.put("node-b", node("hz-b", "archive", "webhooks"));
    v.put("node-a", node("hz-a", "archive", "webhooks"));
    v.put("node-c", node("hz-c", "webhooks"));
    return v;
  }

  private static List<Integer> wanted(Assignment a, String role) {
    return IntStream.range(0, a.partitions()).filter(p -> a.wants(role, p)).boxed().toList();
  }

  @Test
  void the_nodes_with_a_role_take_its_partitions_in_turn_in_node_id_order() {
    Assignment a = new Assignment("node-a", 6, Duration.ofSeconds(5), Ticker.SYSTEM);
    Assignment b = new Assignment("node-b", 6, Duration.ofSeconds(5), Ticker.SYSTEM);
    Assignment c = new Assignment("node-c", 6, Duration.ofSeconds(5), Ticker.SYSTEM);
    List.of(a, b, c).forEach(x -> x.view(view()));
    assertEquals(List.of(0, 2, 4), wanted(a, "archive"));
    assertEquals(List.of(1, 3, 5), wanted(b, "archive"));
    assertEquals(List.of(0, 3), wanted(a, "webhooks"));
    assertEquals(List.of(2, 5), wanted(c, "webhooks"));
  }

  @Test
  void one_partition_is_wanted_by_every_node_and_the_lease_decides() {
    Assignment c = new Assignment("node-c", 1, Duration.ofSeconds(5), Ticker.SYSTEM);
    c.view(view());
    assertTrue(c.wants("archive", 0));
  }

  @Test
  void a_node_not_yet_in_the_view_counts_itself_and_a_departed_or_away_node_is_left_out() {
    Assignment d = new Assignment("node-d", 4, Duration.ofSeconds(5), Ticker.SYSTEM);
    d.view(view());
    assertEquals(List.of(2), wanted(d, "archive"), "a, b, d: d is third");
    d.memberLeft("hz-a");
    assertEquals(List.of(1, 3), wanted(d, "archive"), "b, d");

    Assignment b = new Assignment("node-b", 4, Duration.ofSeconds(5), Ticker.SYSTEM);
    Map<String, JsonObject> v = view();
    v.get("node-a").put("away", new JsonArray(List.of("archive")));
    b.view(v);
    assertEquals(List.of(0, 1, 2, 3), wanted(b, "archive"), "node-a stands down: b alone has the role");
    assertEquals(List.of(1), wanted(b, "webhooks"), "away from archive only: a, b, c share webhooks");

    b.away("archive", Duration.ofMinutes(1));
    assertEquals(List.of("archive"), b.awayRoles());
    assertEquals(List.of(), wanted(b, "archive"), "a node that stands down wants none");
  }

  @Test
  void a_departed_node_counts_again_once_a_heartbeat_ttl_has_passed_on_the_ticker() {
    io.conveyor.testing.MutableTicker ticker = new io.conveyor.testing.MutableTicker(0);
    Assignment d = new Assignment("node-d", 4, Duration.ofSeconds(5), ticker);
    d.view(view());
    d.memberLeft("hz-a");
    assertEquals(List.of(1, 3), wanted(d, "archive"), "b, d");
    ticker.advance(Duration.ofMillis(5001));
    assertEquals(List.of(2), wanted(d, "archive"), "a, b, d again: a's heartbeat still stands in the view");
  }
}
