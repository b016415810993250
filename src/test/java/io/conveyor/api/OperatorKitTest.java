package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.conveyor.testing.Eventually;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestRedis;
import io.conveyor.testing.TestSteps;
import io.conveyor.testing.WebhookReceiver;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The operator's kit under conf/: the Grafana dashboard is a dashboard, and every metric it and the Prometheus alert
 * rules name is on a real node's /metrics; promtool checks the rules and its rule tests make every alert fire.
 */
class OperatorKitTest {
  static final Path RULES = Path.of("conf/prometheus/alerts.yml");
  static final Path RULE_TESTS = Path.of("conf/prometheus/alerts.test.yml");
  static final Path DASHBOARD = Path.of("conf/grafana/conveyor.json");
  private static final Pattern METRIC = Pattern.compile("\\b((?:conveyor|jvm|vertx)_[a-z0-9_]+)");
  private static final Pattern EXPR = Pattern.compile("^\\s*expr:\\s*(.+)$", Pattern.MULTILINE);
  private static final Pattern ALERT = Pattern.compile("^\\s*- alert:\\s*(\\S+)\\s*$", Pattern.MULTILINE);

  /** The dashboard's expressions, after checking it has the shape Grafana imports. */
  static List<String> dashboardExpressions() throws IOException {
    JsonObject d = new JsonObject(Files.readString(DASHBOARD));
    assertEquals("conveyor-overview", d.getString("uid"));
    assertFalse(d.getString("title", "").isBlank());
    assertEquals("DS_PROMETHEUS", d.getJsonArray("__inputs").getJsonObject(0).getString("name"));
    JsonArray panels = d.getJsonArray("panels");
    assertTrue(panels.size() > 5);
    Set<Integer> ids = new HashSet<>();
    List<String> out = new ArrayList<>();
    for (Object o : panels) {
      JsonObject p = (JsonObject) o;
      assertTrue(ids.add(p.getInteger("id")), "panel ids are unique: " + p.getInteger("id"));
      JsonObject at = p.getJsonObject("gridPos");
      assertTrue(at.getInteger("w") > 0 && at.getInteger("w") <= 24 && at.getInteger("h") > 0, p.encode());
      if (!"row".equals(p.getString("type"))) {
        JsonArray targets = p.getJsonArray("targets");
        assertTrue(targets != null && !targets.isEmpty(), "panel " + p.getString("title") + " has no query");
        targets.forEach(t -> out.add(((JsonObject) t).getString("expr")));
      }
    }
    return out;
  }

  static Set<String> metricsNamed(List<String> expressions) {
    Set<String> names = new TreeSet<>();
    for (String e : expressions) {
      Matcher m = METRIC.matcher(e);
      while (m.find()) {
        names.add(m.group(1));
      }
    }
    return names;
  }

  static List<String> ruleExpressions() throws IOException {
    List<String> out = new ArrayList<>();
    Matcher m = EXPR.matcher(Files.readString(RULES));
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  @Test
  void every_metric_the_dashboard_and_the_alert_rules_name_is_on_a_nodes_metrics() throws Exception {
    List<String> expressions = new ArrayList<>(dashboardExpressions());
    expressions.addAll(ruleExpressions());
    assertEquals(9, ruleExpressions().size(), "one expression per alert");
    Set<String> wanted = metricsNamed(expressions);
    assertTrue(wanted.containsAll(Set.of("conveyor_archive_lag_seconds", "conveyor_stuck",
        "conveyor_redis_memory_ratio", "conveyor_leader_present", "conveyor_events_total",
        "conveyor_node_fenced_total", "conveyor_partition_state", "conveyor_partition_state_changes_total")),
        wanted.toString());
    int port = TestRedis.freePort();
    try (WebhookReceiver receiver = new WebhookReceiver(WebhookReceiver.TEST_SECRET)) {
      TestNode node = new TestNode().set("HTTP_PORT", Integer.toString(port))
          .set("WEBHOOKS_SECRET", WebhookReceiver.TEST_SECRET).set("WEBHOOKS_ALLOW_HOSTS", "127.0.0.1")
          .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,'steps':["
              + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
          .start(new TestSteps().registry());
      try {
        // one transaction through the node's API, with a webhook: the meters a run and a delivery create
        new ConveyorClient(node.node().vertx(), io.conveyor.testing.KeyedApi.CLIENT).start(new JsonObject()
            .put("type", "order").put("owner", "acme")
            .put("input", new JsonObject()).put("webhook", receiver.url("/kit"))).await();
        HttpClient http = HttpClient.newHttpClient();
        Set<String> present = Eventually.until(Duration.ofSeconds(15), Duration.ofMillis(200), "every metric named",
            () -> names(http, port), names -> names.containsAll(wanted));
        Set<String> missing = new TreeSet<>(wanted);
        missing.removeAll(present);
        assertEquals(Set.of(), missing);
      } finally {
        node.close();
      }
    }
  }

  private static Set<String> names(HttpClient http, int port) {
    try {
      String text = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      Set<String> names = new TreeSet<>();
      MetricsTest.parse(text).forEach(s -> names.add(s.name()));
      return names;
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void every_alert_rule_has_a_promtool_test_that_makes_it_fire() throws IOException {
    String tests = Files.readString(RULE_TESTS);
    Matcher alerts = ALERT.matcher(Files.readString(RULES));
    int n = 0;
    while (alerts.find()) {
      n++;
      Pattern fires = Pattern.compile("alertname: " + alerts.group(1) + "\\s*\\n\\s*exp_alerts:\\s*\\n\\s*- exp_labels");
      assertTrue(fires.matcher(tests).find(), alerts.group(1) + " has no test that makes it fire in " + RULE_TESTS);
    }
    assertEquals(9, n);
  }

  @Test
  void promtool_checks_the_rules_and_runs_their_tests() throws Exception {
    boolean ci = "true".equals(System.getenv("CI"));
    boolean present = Files.isExecutable(Path.of("/usr/bin/promtool")) || onPath("promtool");
    if (!present) {
      if (ci) {
        fail("promtool is missing in CI: .ci/run installs it (apt-get install -y prometheus)");
      }
      Assumptions.assumeTrue(false, "promtool is not installed (apt-get install -y prometheus): the rules are "
          + "not checked here; CI checks them");
    }
    assertPromtool("check", "rules", RULES.toString());
    assertPromtool("test", "rules", RULE_TESTS.toString());
  }

  private static boolean onPath(String tool) {
    String path = System.getenv("PATH");
    return path != null && java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
        .anyMatch(dir -> Files.isExecutable(Path.of(dir, tool)));
  }

  private static void assertPromtool(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("promtool"));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "promtool " + String.join(" ", args) + " took over a minute");
    assertEquals(0, p.exitValue(), "promtool " + String.join(" ", args) + ":\n" + out);
  }
}
