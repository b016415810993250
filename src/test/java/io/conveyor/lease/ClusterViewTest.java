package io.conveyor.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.MutableTicker;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** ClusterView: who is held after a pause, when the view is whole, and what counts as a change. */
class ClusterViewTest {
  private final MutableTicker ticker = new MutableTicker(1_000_000_000L);
  private final ClusterView view = new ClusterView(Duration.ofMillis(2500), ticker);
  /** This node's Hazelcast members (Vert.x node ids), as the test sets them. */
  private final List<String> members = new ArrayList<>(List.of("c-a", "c-b", "c-c"));
  private int seq;

  ClusterViewTest() {
    view.members(() -> List.copyOf(members));
  }

  /** A live node's heartbeat info: its cluster id, the members it sees (as a fingerprint) and a fresh beat. */
  private JsonObject info(String clusterId, String fingerprint) {
    return new JsonObject().put("clusterNodeId", clusterId).put("view", fingerprint).put("seq", ++seq);
  }

  private Map<String, JsonObject> all(String fingerprint) {
    return Map.of("a", info("c-a", fingerprint), "b", info("c-b", fingerprint), "c", info("c-c", fingerprint));
  }

  @Test
  void a_node_held_after_a_pause_takes_work_again_only_once_every_registered_node_sees_what_it_sees() {
    String whole = view.fingerprint();
    Registration registration = new Registration(Duration.ofSeconds(4), ticker, view);
    view.hold();
    assertFalse(registration.mayWork(), "held");

    members.removeAll(List.of("c-b", "c-c")); // split off: it sees itself alone, Redis lists three
    assertEquals(-1, view.registered("a", all(whole)));
    assertTrue(view.held());

    members.addAll(List.of("c-b", "c-c")); // merged back, but the others' beats still say they do not see it
    String theirs = "3f/2";
    assertEquals(-1, view.registered("a", Map.of("a", info("c-a", whole), "b", info("c-b", theirs),
        "c", info("c-c", theirs))));
    assertTrue(view.held());

    ticker.advance(Duration.ofMillis(700));
    assertEquals(700, view.registered("a", all(whole)), "released, saying how long it was held");
    assertFalse(view.held());
    assertTrue(registration.mayWork());
  }

  @Test
  void a_merge_under_way_is_not_whole_and_holds_the_node() {
    view.merging(true);
    assertTrue(view.held());
    assertEquals(-1, view.registered("a", all(view.fingerprint())));
    view.merging(false);
    assertTrue(view.registered("a", all(view.fingerprint())) >= 0);
  }

  @Test
  void losing_most_of_the_registered_nodes_holds_a_node_and_losing_one_of_three_does_not() {
    view.registered("a", all(view.fingerprint()));
    members.remove("c-c");
    view.memberLeft();
    assertFalse(view.held(), "the others lost one member: they are the ones left whole");
    members.remove("c-b");
    view.memberLeft();
    assertTrue(view.held(), "alone against three registered nodes: this node is the one split off");
  }

  @Test
  void a_request_out_while_a_member_left_or_a_node_went_silent_saw_a_change_and_one_in_a_steady_view_did_not() {
    view.registered("a", all(view.fingerprint()));
    long before = view.now();
    ticker.advance(Duration.ofSeconds(1));
    long sent = view.now();
    assertFalse(view.changedSince(sent), "a steady view");
    view.changed();
    assertTrue(view.changedSince(sent));
    assertTrue(view.changedSince(before));

    ticker.advance(Duration.ofSeconds(1));
    long later = view.now();
    assertFalse(view.changedSince(later));
    // b and c stop beating; a is this node, whose own beat does not count
    Map<String, JsonObject> frozen = all(view.fingerprint());
    view.registered("a", frozen);
    ticker.advance(Duration.ofSeconds(3));
    view.registered("a", frozen);
    assertTrue(view.changedSince(later), "a registered node silent for more than 2.5 s");
    view.registered("a", all(view.fingerprint()));
    assertFalse(view.changedSince(later), "beating again");
  }

  @Test
  void without_a_cluster_the_view_is_always_whole_and_never_changes() {
    ClusterView alone = new ClusterView(Duration.ofSeconds(2), ticker);
    long mark = alone.now();
    alone.hold();
    assertEquals(0, alone.registered("a", Map.of("a", new JsonObject())));
    assertFalse(alone.changedSince(mark));
    assertEquals("", alone.fingerprint());
  }
}
