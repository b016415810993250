package io.conveyor.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.conveyor.HttpWiring;
import io.conveyor.domain.Transactions;
import io.conveyor.metrics.NodeMetrics;
import io.conveyor.model.TxException;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.Future;
import io.vertx.ext.web.Route;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/openapi.yaml and the router say the same: no route missing from either, no problem type either. */
class OpenApiTest {
  private static final Pattern PATH = Pattern.compile("^  (/\\S*):\\s*$");
  private static final Pattern METHOD = Pattern.compile("^    (get|put|post|delete|patch):\\s*$");

  private static Set<String> specRoutes(String spec) {
    Set<String> out = new TreeSet<>();
    String path = null;
    for (String line : spec.lines().toList()) {
      Matcher p = PATH.matcher(line);
      Matcher m = METHOD.matcher(line);
      if (p.matches()) {
        path = p.group(1);
      } else if (m.matches() && path != null) {
        out.add(m.group(1).toUpperCase() + " " + path);
      } else if (!line.startsWith(" ") && !line.startsWith("paths:")) {
        path = null;
      }
    }
    return out;
  }

  @Test
  void every_route_is_in_the_spec_and_every_spec_route_is_served() throws IOException {
    String spec = Files.readString(Path.of("docs/openapi.yaml"));
    try (TestNode node = new TestNode().start(new TestSteps().registry())) {
      HttpWiring routes = new HttpWiring(node.config(), node.node().catalog(), node.node().archive(),
          new NodeMetrics(false), List.of(), () -> "ok");
      HttpApiVerticle api = new HttpApiVerticle(node.config().http(), node.config().security().httpTls(),
          node.node().redis(),
          context -> new Transactions(context, node.node().catalog(), node.config(),
              Future.succeededFuture(node.node().archive()), new NodeMetrics(false)), routes::on);
      node.node().vertx().deployVerticle(api).await();
      Set<String> served = new TreeSet<>();
      for (Route r : api.router().getRoutes()) {
        if (r.getPath() != null && r.methods() != null && !r.methods().isEmpty()) {
          r.methods().forEach(m -> served.add(m.name() + " " + r.getPath().replaceAll(":(\\w+)", "{$1}")));
        }
      }
      assertEquals(served, specRoutes(spec));
    }
  }

  @Test
  void every_problem_type_is_in_the_spec() throws IOException {
    String spec = Files.readString(Path.of("docs/openapi.yaml"));
    String line = spec.lines().filter(l -> l.contains("enum: [invalid-input")).findFirst().orElseThrow();
    Set<String> listed = new TreeSet<>(Arrays.asList(line.replaceAll(".*\\[(.*)].*", "$1").split(",\\s*")));
    Set<String> kinds = new TreeSet<>();
    for (TxException.Kind k : TxException.Kind.values()) {
      kinds.add(k.type);
    }
    assertEquals(kinds, listed);
  }
}
