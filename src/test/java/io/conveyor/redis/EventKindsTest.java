package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The kinds a reader may filter by are the kinds docs/redis-keys.md lists, in its order. */
class EventKindsTest {
  @Test
  void the_kinds_are_those_of_the_events_table_in_docs_redis_keys() throws IOException {
    List<String> documented = new ArrayList<>();
    boolean inTable = false;
    Pattern row = Pattern.compile("\\| `([a-z-]+)` \\|.*");
    for (String line : Files.readAllLines(Path.of("docs/redis-keys.md"))) {
      if (line.startsWith("| kind |")) {
        inTable = true;
      } else if (inTable && !line.startsWith("|")) {
        break;
      } else if (inTable) {
        Matcher m = row.matcher(line);
        if (m.matches()) {
          documented.add(m.group(1));
        }
      }
    }
    assertEquals(documented, EventKinds.ALL, "docs/redis-keys.md's event kinds and EventKinds.ALL");
  }
}
