package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What README shows as a copy of a shipped file is that file. */
class ReadmeTest {
  @Test
  void the_pipelines_section_shows_the_shipped_example_pipeline_as_it_is() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    int section = readme.indexOf("\n## Pipelines\n");
    int start = readme.indexOf("```json\n", section) + "```json\n".length();
    String shown = readme.substring(start, readme.indexOf("```", start));
    assertEquals(Files.readString(Path.of("conf/pipelines/example.json")).strip(), shown.strip());
  }
}
