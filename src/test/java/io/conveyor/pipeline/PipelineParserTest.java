package io.conveyor.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineParserTest {
  private final PipelineParser parser = new PipelineParser(StepRegistry.withBuiltIns());
  @TempDir
  Path dir;

  private static JsonObject json(String text) {
    return new JsonObject(text.replace('\'', '"'));
  }

  private String refusal(String text) {
    return assertThrows(PipelineException.class, () -> parser.parse(json(text), "f.json")).getMessage();
  }

  @Test
  void the_shipped_pipelines_are_valid() {
    assertTrue(parser.loadDir(Path.of("conf/pipelines")).stream().anyMatch(p -> p.pipeline().name().equals("example")));
  }

  @Test
  void startOn_names_an_event_of_a_transaction_type_and_is_part_of_the_version() {
    String base = "{'name':'p','nodeGroup':'g','transactionType':true,'startOn':{'event':'order.placed'},'steps':["
        + "{'type':'flow/await','params':{'event':'order.placed','key':'${input.orderId}'}}]}";
    CompiledPipeline p = parser.parse(json(base), "f.json");
    assertEquals("order.placed", p.pipeline().startOn());
    assertEquals(p.version(), parser.parse(p.pipeline().toJson(), "stored").version());
    assertNotEquals(p.version(), parser.parse(json(base.replace("'startOn':{'event':'order.placed'},", "")), "f.json")
        .version());
    assertTrue(refusal(base.replace("'transactionType':true", "'transactionType':false"))
        .startsWith("f.json: startOn: only a transaction type"));
    assertTrue(refusal(base.replace("{'event':'order.placed'}", "{'event':'order placed'}"))
        .startsWith("f.json: startOn: expected {\"event\""));
    assertTrue(refusal(base.replace("{'event':'order.placed'}", "{'event':'o','key':'k'}"))
        .startsWith("f.json: startOn: expected"));
  }

  @Test
  void flow_await_params_are_checked_at_load() {
    String base = "{'name':'p','nodeGroup':'g','steps':[{'type':'flow/await','params':%s}]}";
    assertTrue(refusal(String.format(base, "{'key':'k'}")).contains("params.event: expected a string"));
    assertTrue(refusal(String.format(base, "{'event':'a b','key':'k'}")).contains("params.event: expected an event name"));
    assertTrue(refusal(String.format(base, "{'event':'a','key':'${input}'}")).contains("params.key: unknown placeholder"));
    assertTrue(refusal(String.format(base, "{'event':'a','key':'k','onTimeout':'skip'}"))
        .contains("params.onTimeout: expected fail or continue"));
    assertTrue(refusal(String.format(base, "{'event':'a','key':'k','default':{}}"))
        .contains("params.default: only with onTimeout continue"));
  }

  @Test
  void a_name_with_a_control_character_is_refused_naming_file_and_field() {
    String m = assertThrows(PipelineException.class, () -> parser.parse(new JsonObject().put("name", "ord\u0000er")
        .put("nodeGroup", "master").put("steps", new io.vertx.core.json.JsonArray()), "order.json")).getMessage();
    assertTrue(m.startsWith("order.json: name: contains the control character U+0000 at index 3"), m);
    String g = assertThrows(PipelineException.class, () -> parser.parse(new JsonObject().put("name", "order")
        .put("nodeGroup", "mas\tter").put("steps", new io.vertx.core.json.JsonArray()), "order.json")).getMessage();
    assertTrue(g.startsWith("order.json: nodeGroup: contains the control character U+0009"), g);
  }

  @Test
  void a_valid_pipeline_keeps_its_timeouts_and_a_version_that_follows_its_content() {
    String base = "{'name':'p','nodeGroup':'g','transactionType':true,'timeout':'2s','steps':["
        + "{'type':'util/delay','params':{'duration':'10ms'},'timeout':'500ms'},{'type':'util/fail'}]}";
    CompiledPipeline p = parser.parse(json(base), "f.json");
    assertEquals(Duration.ofMillis(500), p.pipeline().stepTimeout(0, Duration.ofSeconds(30)));
    assertEquals(Duration.ofSeconds(2), p.pipeline().stepTimeout(1, Duration.ofSeconds(30)));
    assertEquals(p.version(), parser.parse(json(base), "again").version());
    assertNotEquals(p.version(), parser.parse(json(base.replace("10ms", "20ms")), "f.json").version());
    assertEquals(p.version(), parser.parse(p.pipeline().toJson(), "stored").version());
  }

  @Test
  void a_step_takes_its_own_retry_policy_else_the_pipelines_with_defaults_filled_in() {
    CompiledPipeline p = parser.parse(json("{'name':'p','nodeGroup':'g','retry':{'maxAttempts':4},'steps':["
        + "{'type':'util/fail'},{'type':'util/fail','retry':{'initialInterval':'200ms','backoffCoefficient':1.5,"
        + "'jitter':false,'nonRetryable':['bad-input']}}]}"), "f.json");
    io.conveyor.model.RetryPolicy first = p.pipeline().retryPolicy(0);
    assertEquals(4, first.maxAttempts());
    assertEquals(Duration.ofSeconds(1), first.initialInterval());
    assertEquals(Duration.ofSeconds(100), first.maxInterval(), "100 × the initial interval");
    io.conveyor.model.RetryPolicy second = p.pipeline().retryPolicy(1);
    assertEquals(3, second.maxAttempts());
    assertEquals(Duration.ofMillis(300), second.delayAfter(2, 0.99), "200ms × 1.5, no jitter");
    assertTrue(second.retries("failed", 2));
    assertTrue(!second.retries("bad-input", 1) && !second.retries("failed", 3));
    assertEquals(p.version(), parser.parse(p.pipeline().toJson(), "stored").version());
    assertEquals(io.conveyor.model.RetryPolicy.NONE, parser.parse(json("{'name':'p','nodeGroup':'g','steps':["
        + "{'type':'util/fail'}]}"), "f.json").pipeline().retryPolicy(0));
  }

  @Test
  void jitter_only_ever_adds_to_the_interval_and_the_longest_interval_caps_it() {
    io.conveyor.model.RetryPolicy r = io.conveyor.model.RetryPolicy.parse(json("{'initialInterval':'100ms',"
        + "'maxInterval':'1s'}"));
    assertEquals(Duration.ofMillis(100), r.delayAfter(1, 0));
    assertEquals(Duration.ofMillis(119), r.delayAfter(1, 0.999));
    assertEquals(Duration.ofMillis(1000), r.delayAfter(10, 0));
  }

  @Test
  void on_failure_names_another_pipeline_and_is_part_of_the_version() {
    String base = "{'name':'p','nodeGroup':'g','steps':[{'type':'util/fail'}]}";
    CompiledPipeline with = parser.parse(json(base.replace("'steps'", "'onFailure':'undo-p','steps'")), "f.json");
    assertEquals("undo-p", with.pipeline().onFailure());
    assertNotEquals(parser.parse(json(base), "f.json").version(), with.version());
    assertEquals(with.version(), parser.parse(with.pipeline().toJson(), "stored").version());
    assertTrue(refusal(base.replace("'steps'", "'onFailure':'p','steps'"))
        .contains("onFailure: a pipeline cannot compensate itself"));
    assertTrue(refusal(base.replace("'steps'", "'onFailure':'no good','steps'")).contains("f.json: onFailure:"));
  }

  @Test
  void a_rate_limit_is_a_count_per_second_minute_or_hour_and_part_of_the_version() {
    String base = "{'name':'p','nodeGroup':'g','steps':[{'type':'util/fail'}]}";
    CompiledPipeline limited = parser.parse(json(base.replace("'steps'", "'rateLimit':'30/m','steps'")), "f.json");
    assertEquals(0.5, limited.pipeline().ratePerSecond());
    assertEquals("30/m", limited.pipeline().toJson().getString("rateLimit"));
    assertNotEquals(parser.parse(json(base), "f.json").version(), limited.version());
    for (String bad : List.of("'100'", "'0/s'", "'10/d'", "100", "'1.5/s'")) {
      assertTrue(refusal(base.replace("'steps'", "'rateLimit':" + bad + ",'steps'")).contains("rateLimit: expected"),
          bad);
    }
  }

  @Test
  void an_http_request_step_is_checked_at_load() {
    String step = "{'name':'p','nodeGroup':'g','steps':[{'type':'http/request','params':%s}]}";
    assertTrue(refusal(step.formatted("{}")).contains("step 1 (http/request): params.url: expected a string"));
    assertTrue(refusal(step.formatted("{'url':'http://x/${inptu.id}'}"))
        .contains("params.url: unknown placeholder ${inptu.id}"));
    assertTrue(refusal(step.formatted("{'url':'http://x/','method':'FETCH'}")).contains("params.method: expected GET"));
    assertTrue(refusal(step.formatted("{'url':'http://x/','body':{'a':['${nope}']}}"))
        .contains("params.body.a[0]: unknown placeholder ${nope}"));
    assertTrue(refusal(step.formatted("{'url':'http://x/','successStatus':['2xx',700]}"))
        .contains("params.successStatus: expected status codes from 100 to 599"));
    assertTrue(refusal(step.formatted("{'url':'http://x/','header':{}}"))
        .contains("unknown param 'header' (did you mean headers?) (expected body, headers, idempotencyHeader, method, "
            + "retryableStatus, successStatus, url)"));
    assertTrue(refusal(step.formatted("{'url':'http://x/','idempotencyHeader':'Idem Key'}"))
        .contains("params.idempotencyHeader: expected a header name (or \"\" to send no idempotency key), got Idem Key"));
    String delay = "{'name':'d','nodeGroup':'g','steps':[{'type':'util/delay','params':%s}]}";
    assertTrue(refusal(delay.formatted("{'duraton':'1s'}")).contains("unknown param 'duraton' (did you mean duration?)"),
        refusal(delay.formatted("{'duraton':'1s'}")));
  }

  @Test
  void idempotent_false_is_kept_in_the_definition_and_the_version_and_anything_but_a_boolean_is_refused() {
    String text = "{'name':'p','nodeGroup':'g','steps':[{'type':'util/fixed-reply','params':{'reply':{}}%s}]}";
    CompiledPipeline plain = parser.parse(json(text.formatted("")), "f.json");
    CompiledPipeline once = parser.parse(json(text.formatted(",'idempotent':false")), "f.json");
    assertTrue(plain.pipeline().steps().get(0).idempotent());
    assertEquals(false, once.pipeline().steps().get(0).idempotent());
    assertEquals(plain.version(), parser.parse(json(text.formatted(",'idempotent':true")), "f.json").version(),
        "true is the default: the version of a pipeline that says so does not change");
    assertNotEquals(plain.version(), once.version());
    assertEquals(false, once.pipeline().toJson().getJsonArray("steps").getJsonObject(0).getBoolean("idempotent"));
    assertEquals(false, parser.parse(once.pipeline().toJson(), "stored").pipeline().steps().get(0).idempotent());
    assertTrue(refusal(text.formatted(",'idempotent':'no'")).contains("f.json: step 1 (util/fixed-reply): idempotent: "
        + "expected true or false"), refusal(text.formatted(",'idempotent':'no'")));
  }

  @Test
  void a_bad_retry_policy_is_refused_naming_the_field() {
    String step = "{'name':'p','nodeGroup':'g','steps':[{'type':'util/fail','retry':%s}]}";
    assertEquals("f.json: step 1 (util/fail): retry.maxAttempts: expected a whole number from 1 to 1000, got 0",
        refusal(step.formatted("{'maxAttempts':0}")));
    assertTrue(refusal(step.formatted("{'maxAttempts':3,'backof':2}"))
        .contains("step 1 (util/fail): retry: unknown field 'backof'"));
    assertTrue(refusal(step.formatted("{'initialInterval':'soon'}")).contains("retry.initialInterval:"));
    assertTrue(refusal(step.formatted("{'initialInterval':'2s','maxInterval':'1s'}"))
        .contains("retry.maxInterval: must not be shorter than initialInterval (2s)"));
    assertTrue(refusal(step.formatted("{'nonRetryable':'timeout'}")).contains("retry.nonRetryable:"));
    assertTrue(refusal(step.formatted("5")).contains("step 1 (util/fail): retry: expected an object"));
    assertTrue(refusal("{'name':'p','nodeGroup':'g','retry':{'jitter':'yes'},'steps':[{'type':'util/fail'}]}")
        .startsWith("f.json: retry.jitter: expected true or false"));
  }

  @Test
  void an_invalid_definition_is_refused_naming_the_source_the_step_and_the_problem() {
    assertEquals("f.json: step 2 (util/delay): params.duration: expected a whole number with a unit: ms, s, m, h or "
            + "d (e.g. 500ms, 60s, 6h), got 'later'",
        refusal("{'name':'p','nodeGroup':'g','steps':[{'type':'util/fail'},"
            + "{'type':'util/delay','params':{'duration':'later'}}]}"));
    assertTrue(refusal("{'name':'p','nodeGroup':'g','steps':[{'type':'no/such'}]}")
        .startsWith("f.json: step 1 (no/such): unknown step type 'no/such'"));
    assertTrue(refusal("{'name':'p','nodeGroup':'g','steps':[{'type':'util/fixed-reply','params':{}}]}")
        .contains("step 1 (util/fixed-reply): params.reply: expected a JSON object"));
    assertTrue(refusal("{'name':'p','nodeGroup':'g','steps':[]}").contains("f.json: steps:"));
    assertTrue(refusal("{'name':'p p','nodeGroup':'g','steps':[{'type':'util/fail'}]}").contains("f.json: name:"));
    assertTrue(refusal("{'name':'p','steps':[{'type':'util/fail'}]}").contains("f.json: nodeGroup:"));
    assertTrue(refusal("{'name':'p','nodeGroup':'g','stpes':[]}").contains("unknown field 'stpes'"));
    assertTrue(refusal("{'name':'p','nodeGroup':'g','steps':[{'type':'util/fail','timeout':'0s'}]}")
        .contains("step 1 (util/fail): timeout"));
  }

  @Test
  void a_file_that_is_not_json_is_refused_naming_the_file() throws IOException {
    Path f = dir.resolve("broken.json");
    Files.writeString(f, "{\"name\": ");
    String m = assertThrows(PipelineException.class, () -> parser.loadDir(dir)).getMessage();
    assertTrue(m.startsWith(f + ": not a JSON object"), m);
  }
}
