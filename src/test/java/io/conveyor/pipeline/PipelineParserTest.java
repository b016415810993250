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
