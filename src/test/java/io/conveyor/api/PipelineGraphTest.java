package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.testing.KeyedApi;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.NodeList;

/** GET /api/v1/pipelines/{name}/graph.svg: a pipeline drawn, parsed back as XML, on a real node. */
class PipelineGraphTest {
  private final TestSteps steps = new TestSteps();
  private final KeyedApi api = new KeyedApi();
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  private void start() {
    node = api.on(new TestNode())
        .pipeline("refund", "{'name':'refund','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("ship", "{'name':'ship','nodeGroup':'master','transactionType':true,'steps':["
            + "{'type':'util/fixed-reply','params':{'reply':{}}}]}")
        .pipeline("order", "{'name':'order','nodeGroup':'master','transactionType':true,"
            + "'description':'Orders <b>&amp; \\u0000 refunds</b>','onFailure':'refund','timeout':'10s',"
            + "'steps':[{'type':'http/request','params':{'method':'GET','url':'http://127.0.0.1:1/a?x=1&y=<2>'},"
            + "'retry':{'maxAttempts':4}},"
            + "{'type':'util/child-pipeline','params':{'pipeline':'ship'}},"
            + "{'type':'flow/parallel','params':{'branches':[{'pipeline':'ship'},{'pipeline':'refund'}],"
            + "'join':'any'}},"
            + "{'type':'util/fixed-reply','params':{'reply':{'done':true}}}]}")
        .start(steps.registry());
  }

  private HttpResponse<String> get(String path, String key) throws Exception {
    return api.send("GET", path, key, null);
  }

  private static List<String> texts(Document svg) {
    NodeList nodes = svg.getElementsByTagName("text");
    List<String> out = new ArrayList<>();
    for (int i = 0; i < nodes.getLength(); i++) {
      out.add(nodes.item(i).getTextContent());
    }
    return out;
  }

  private static Document parse(String svg) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(true);
    return f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void a_pipeline_is_drawn_with_its_steps_from_1_its_children_and_compensation_as_links_and_its_counts() throws Exception {
    start();
    String txId = node.start("order", new JsonObject());
    node.awaitFinal(txId);
    HttpResponse<String> r = get("/api/v1/pipelines/order/graph.svg", "k-ops");
    assertEquals(200, r.statusCode(), r.body());
    assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("image/svg+xml"));
    Document svg = parse(r.body());
    assertEquals("svg", svg.getDocumentElement().getLocalName());
    List<String> texts = texts(svg);
    assertTrue(texts.contains("1 · http/request"), texts.toString());
    assertTrue(texts.contains("4 · util/fixed-reply"), texts.toString());
    assertFalse(texts.stream().anyMatch(t -> t.startsWith("0 · ")), "steps count from 1: " + texts);
    assertTrue(texts.stream().anyMatch(t -> t.contains("url http://127.0.0.1:1/a?x=1&y=<2>")
        && t.contains("up to 4 attempts") && t.contains("timeout 10s")), texts.toString());
    assertTrue(texts.stream().anyMatch(t -> t.contains("2 branches") && t.contains("join any")), texts.toString());
    // the description's markup is text, not elements; its NUL is shown as U+FFFD
    assertEquals(0, svg.getElementsByTagName("b").getLength());
    assertTrue(texts.contains("Orders <b>&amp; \uFFFD refunds</b>"), texts.toString());
    // children, branches and the compensation are links to their own graphs
    NodeList links = svg.getElementsByTagName("a");
    List<String> hrefs = new ArrayList<>();
    for (int i = 0; i < links.getLength(); i++) {
      hrefs.add(links.item(i).getAttributes().getNamedItem("href").getNodeValue());
    }
    assertEquals(List.of("../ship/graph.svg", "../refund/graph.svg", "../ship/graph.svg", "../refund/graph.svg"),
        hrefs);
    assertTrue(texts.stream().anyMatch(t -> t.startsWith("last hour: ") && t.contains("started")), texts.toString());
    assertTrue(get("/api/v1/pipelines/ship/graph.svg", "k-ops").body().contains("1 · util/fixed-reply"));
  }

  @Test
  void an_unknown_pipeline_is_404_and_a_client_key_is_403() throws Exception {
    start();
    HttpResponse<String> missing = get("/api/v1/pipelines/nope/graph.svg", "k-ops");
    assertEquals(404, missing.statusCode());
    assertEquals("not-found", new JsonObject(missing.body()).getString("type"));
    assertEquals(403, get("/api/v1/pipelines/order/graph.svg", "k-acme").statusCode());
  }

  @Test
  void the_counts_line_names_each_status_and_says_when_nothing_moved() {
    assertEquals("nothing started or completed", PipelineGraph.counts(Map.of()));
    assertEquals("12 started, 10 completed (1 failed, 9 success)", PipelineGraph.counts(Map.of("started", 12L,
        "completed", 10L, "completed.success", 9L, "completed.failed", 1L, "completed.timeout", 0L)));
    String long80 = "x".repeat(80);
    assertEquals(72, PipelineGraph.text(long80).length());
    assertTrue(PipelineGraph.text(long80).endsWith("…"));
    assertEquals("a\uFFFDb\uD83D\uDE00", PipelineGraph.text("a\uD800b\uD83D\uDE00"), "a lone surrogate is not XML");
  }
}
