package io.conveyor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.AuditEntry;
import io.conveyor.testing.TestNode;
import io.conveyor.testing.TestSteps;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** conveyor audit: the archive's audit log from the command line, filtered and paged. */
class CliAuditTest {
  private TestNode node;

  @BeforeEach
  void startNode() {
    node = new TestNode().start(new TestSteps().registry());
  }

  @AfterEach
  void stopNode() {
    node.close();
  }

  private CliRun cli(String... args) {
    return CliRun.of(node.config(), args);
  }

  private static AuditEntry entry(long at, String action, int status) {
    return new AuditEntry(0, at, "0123456789ab", "ops", action, "pay", AuditEntry.outcome(status), status,
        status == 200 ? null : "invalid-input", "10.0.0.7", "http", "node-x", new JsonObject());
  }

  @Test
  void audit_lists_the_acts_newest_first_by_outcome_and_a_page_at_a_time() {
    long t = 1_800_000_000_000L;
    node.node().archive().appendAudit(List.of(entry(t, "PUT /api/v1/pipelines/:name", 200),
        entry(t + 1, "DELETE /api/v1/pipelines/:name", 400), entry(t + 2, "DELETE /api/v1/pipelines/:name", 200)))
        .await();
    CliRun refused = cli("audit", "--outcome", "refused");
    assertEquals(0, refused.code(), refused.err());
    assertEquals(List.of("2027-01-15T08:00:00.001Z  0123456789ab (ops)  DELETE /api/v1/pipelines/:name  pay  refused "
        + "400 invalid-input  from 10.0.0.7"), refused.out().lines().toList());
    CliRun page = cli("audit", "--limit", "2", "--json");
    List<String> lines = page.out().lines().toList();
    assertEquals(3, lines.size(), page.out());
    assertEquals(t + 2, java.time.Instant.parse(new JsonObject(lines.get(0)).getString("time")).toEpochMilli());
    String next = new JsonObject(lines.get(2)).getString("next");
    CliRun rest = cli("audit", "--limit", "2", "--cursor", next);
    assertTrue(rest.out().startsWith("2027-01-15T08:00:00Z  0123456789ab (ops)  PUT"), rest.out());
    CliRun bad = cli("audit", "--outcome", "maybe");
    assertEquals(Cli.USAGE, bad.code());
    assertTrue(bad.err().contains("expected ok, refused or failed"), bad.err());
  }
}
