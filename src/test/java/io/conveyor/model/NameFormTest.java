package io.conveyor.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** NameForm accepts exactly what the regular expressions it replaced accepted. */
class NameFormTest {
  private static final Pattern TYPE = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}");

  @Test
  void it_agrees_with_the_regular_expressions_on_edges_and_on_random_names() {
    NameForm type = new NameForm(64, "_.-");
    List<String> names = new ArrayList<>(List.of("", "a", "-a", "_", "a-b.c_d", "a@b", "a:b", "a b", "a\u0000b",
        "é", "aé", "a\nb", "A9", "9a", "a".repeat(64), "a".repeat(65), "a".repeat(128), "a".repeat(129), "ａ",
        "a/b", "a\\b", "a%b", "@a", ".a"));
    Random random = new Random(37);
    String alphabet = "aZ09_.-@: /\u0000é\n";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder b = new StringBuilder();
      int n = random.nextInt(140);
      for (int j = 0; j < n; j++) {
        b.append(j < 3 || random.nextInt(20) == 0 ? alphabet.charAt(random.nextInt(alphabet.length())) : 'x');
      }
      names.add(b.toString());
    }
    int accepted = 0;
    for (String s : names) {
      assertEquals(TYPE.matcher(s).matches(), type.matches(s), "type " + s);
      assertEquals(OWNER.matcher(s).matches(), StartRequest.OWNER.matches(s), "owner " + s);
      accepted += StartRequest.OWNER.matches(s) ? 1 : 0;
    }
    // both answers occur among the random names, so the comparison above is not one-sided
    assertTrue(accepted > 100 && accepted < names.size() - 100, "accepted " + accepted);
  }
}
