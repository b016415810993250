package io.conveyor;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.conveyor.api.RouteGroup;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.VerticleBase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The import rules of the house (docs/decisions.md, "The structure"), held against the product's classes. */
class ArchitectureTest {
  private static JavaClasses product;

  @BeforeAll
  static void importProduct() {
    product = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.conveyor");
  }

  @Test
  void no_two_packages_import_each_other_even_through_others() {
    slices().matching("io.conveyor.(*)..").should().beFreeOfCycles().check(product);
  }

  @Test
  void only_the_composition_root_knows_the_node() {
    noClasses().that().doNotHaveFullyQualifiedName(Main.class.getName())
        .and().doNotHaveFullyQualifiedName(Node.class.getName())
        .and().doNotHaveFullyQualifiedName(NodeCluster.class.getName())
        .should().dependOnClassesThat().haveFullyQualifiedName(Node.class.getName())
        .check(product);
  }

  @Test
  void the_roles_queue_archive_webhook_schedule_and_node_liveness_never_import_one_another() {
    slices().matching("io.conveyor.(queue|archive|webhook|schedule|node)..").should().notDependOnEachOther()
        .check(product);
  }

  @Test
  void the_api_and_the_domain_reach_work_only_through_redis_and_the_bus() {
    noClasses().that().resideInAnyPackage("io.conveyor.api..", "io.conveyor.domain..")
        .should().dependOnClassesThat().resideInAnyPackage("io.conveyor.queue..", "io.conveyor.archive..",
            "io.conveyor.node..")
        .check(product);
  }

  @Test
  void the_stores_depend_on_nothing_above_them() {
    noClasses().that().resideInAnyPackage("io.conveyor.redis..", "io.conveyor.database..", "io.conveyor.model..",
            "io.conveyor.config..")
        .should().dependOnClassesThat().resideInAnyPackage("io.conveyor.api..", "io.conveyor.domain..",
            "io.conveyor.queue..", "io.conveyor.archive..", "io.conveyor.webhook..", "io.conveyor.node..",
            "io.conveyor.schedule..", "io.conveyor.lease..", "io.conveyor.pipeline..", "io.conveyor.bus..",
            "io.conveyor.metrics..")
        .check(product);
  }

  @Test
  void time_comes_from_the_injected_clock_never_from_the_wall() {
    noClasses().should().callMethod(System.class, "currentTimeMillis")
        .orShould().callMethod(Instant.class, "now")
        .check(product);
  }

  @Test
  void production_code_has_no_fault_hooks_that_halt_the_process() {
    noClasses().should().callMethod(Runtime.class, "halt", int.class).check(product);
  }

  /**
   * Nothing that runs on an event loop waits: with one loop per processor (docs/decisions.md) a wait there stalls
   * every verticle on that thread. Only the CLI and main() (their own thread), the Hazelcast config (probed before
   * Vert.x exists) and the archive's database code (run by executeBlocking) may block.
   */
  @Test
  void nothing_outside_the_cli_and_the_database_code_blocks_a_thread() {
    noClasses().that().resideOutsideOfPackage("io.conveyor.database..")
        .and(DescribedPredicate.describe("are not the CLI (Cli*, ClientRoot), main() or the Hazelcast config (read"
            + " before Vert.x exists)", c -> !c.getName().startsWith("io.conveyor.Cli")
            && !c.getName().startsWith("io.conveyor.ClientRoot") && !c.getName().equals("io.conveyor.Main")
            && !c.getName().equals("io.conveyor.HazelcastConfig")))
        .should().callMethod(io.vertx.core.Future.class, "await")
        .orShould().callMethod(io.vertx.core.Future.class, "await", long.class, java.util.concurrent.TimeUnit.class)
        .orShould().callMethod(io.vertx.core.Future.class, "await", io.vertx.core.Future.class)
        .orShould().callMethod(Thread.class, "sleep", long.class)
        .orShould().callMethod(java.util.concurrent.CompletableFuture.class, "join")
        .orShould().callMethod(java.util.concurrent.Future.class, "get")
        .orShould().callMethod(java.util.concurrent.Future.class, "get", long.class, java.util.concurrent.TimeUnit.class)
        .orShould().callMethod(java.util.concurrent.CompletableFuture.class, "get")
        .orShould().callMethod(java.util.concurrent.CompletableFuture.class, "get", long.class,
            java.util.concurrent.TimeUnit.class)
        .orShould().callMethod(java.util.concurrent.CountDownLatch.class, "await")
        .orShould().callMethod(java.util.concurrent.CountDownLatch.class, "await", long.class,
            java.util.concurrent.TimeUnit.class)
        .because("a node's verticles share one event loop per processor: a wait on one stalls the others")
        .check(product);
  }

  /** A verticle: an actor, whose state is touched on its own context only (DESIGN.md, "Actors"). */
  private static final DescribedPredicate<JavaClass> VERTICLE = DescribedPredicate.describe("are verticles",
      c -> c.isAssignableTo(VerticleBase.class) || c.isAssignableTo(AbstractVerticle.class));

  @Test
  void no_verticle_holds_a_volatile_or_atomic_field_or_a_synchronized_method() {
    fields().that().areDeclaredInClassesThat(VERTICLE)
        .should().notHaveModifier(JavaModifier.VOLATILE)
        .andShould().notHaveRawType(DescribedPredicate.describe("a java.util.concurrent.atomic type",
            t -> t.getPackageName().equals("java.util.concurrent.atomic")))
        .because("a verticle is an actor: another verticle asks it by message or runOnContext, never shares its state")
        .check(product);
    methods().that().areDeclaredInClassesThat(VERTICLE)
        .should().notHaveModifier(JavaModifier.SYNCHRONIZED)
        .because("a verticle is an actor: its methods run on its own context, one at a time")
        .check(product);
  }

  /** synchronized (x) { } leaves no trace ArchUnit sees: the verticles' sources are read instead. */
  @Test
  void no_verticle_source_has_a_synchronized_block_or_an_atomic() throws IOException {
    List<JavaClass> verticles = product.stream().filter(VERTICLE).filter(c -> !c.isNestedClass()).toList();
    assertFalse(verticles.size() < 10, "verticles found: " + verticles.size());
    Pattern comment = Pattern.compile("//[^\\n]*|/\\*.*?\\*/|\"(?:\\\\.|[^\"\\\\])*+\"", Pattern.DOTALL);
    List<String> offenders = new java.util.ArrayList<>();
    for (JavaClass verticle : verticles) {
      Path source = Path.of("src/main/java", verticle.getPackageName().replace('.', '/'),
          verticle.getSource().orElseThrow().getFileName().orElseThrow());
      String code = comment.matcher(Files.readString(source)).replaceAll(" ");
      // an atomic, even a local one, says that state is shared with another thread
      if (Pattern.compile("\\bsynchronized\\b|java\\.util\\.concurrent\\.atomic").matcher(code).find()) {
        offenders.add(source.toString());
      }
    }
    assertEquals(List.of(), offenders, "verticles with a synchronized block or an atomic (a verticle is an actor: "
        + "ask it by message or runOnContext instead)");
  }

  /** The packages of the leader roles and the worker (docs/decisions.md, "Leases have one home"). */
  private static final String[] ROLES = {"io.conveyor.queue..", "io.conveyor.archive..", "io.conveyor.webhook..",
      "io.conveyor.schedule..", "io.conveyor.node.."};

  /** The product's one reader of the JVM's clocks: everything else is handed a Ticker or a Clock. */
  @Test
  void elapsed_time_comes_from_the_injected_ticker_everywhere() {
    noClasses().that().doNotHaveFullyQualifiedName("io.conveyor.time.SystemTicker")
        .should().callMethod(System.class, "nanoTime")
        .orShould().callMethod(System.class, "currentTimeMillis")
        .because("time must be drivable by a test: elapsed time comes from time.Ticker, wall time from the Clock")
        .check(product);
  }

  /** Every package may use the ticker, so it may use none of them (no cycle can pass through it). */
  @Test
  void the_time_package_depends_on_no_other_conveyor_package() {
    noClasses().that().resideInAPackage("io.conveyor.time..")
        .should().dependOnClassesThat(DescribedPredicate.describe("are Conveyor classes outside io.conveyor.time",
            c -> within(c, "io.conveyor") && !within(c, "io.conveyor.time")))
        .check(product);
  }

  @Test
  void the_lease_package_imports_no_role() {
    noClasses().that().resideInAPackage("io.conveyor.lease..")
        .should().dependOnClassesThat().resideInAnyPackage(ROLES)
        .orShould().dependOnClassesThat().resideInAnyPackage("io.conveyor.api..", "io.conveyor.domain..")
        .check(product);
  }

  @Test
  void the_roles_reach_leases_only_through_the_lease_package() {
    noClasses().that().resideInAnyPackage(ROLES)
        .should().dependOnClassesThat().haveFullyQualifiedName("io.conveyor.redis.LeaderRole")
        .orShould().callMethodWhere(DescribedPredicate.describe("a lease call of LivenessStore", call ->
            call.getTargetOwner().getName().equals("io.conveyor.redis.LivenessStore")
                && List.of("lease", "breakLease", "leader").contains(call.getName())))
        .because("a role leads through lease.LeaderLoop (tick, renewal, hand-on), never by lease calls of its own")
        .check(product);
  }

  @Test
  void the_pipeline_package_needs_nothing_of_conveyor_but_the_model() {
    DescribedPredicate<JavaClass> outside = DescribedPredicate.describe(
        "Conveyor classes outside io.conveyor.pipeline and io.conveyor.model (reach them through an interface "
            + "pipeline or model owns, implemented outside)",
        c -> within(c, "io.conveyor") && !within(c, "io.conveyor.pipeline") && !within(c, "io.conveyor.model"));
    noClasses().that().resideInAPackage("io.conveyor.pipeline..").should().dependOnClassesThat(outside)
        .check(product);
  }

  /** flow/await asks the node by a local address the pipeline package cannot import from the bus: one name. */
  @Test
  void the_await_step_and_the_bus_name_the_same_local_address() {
    assertEquals(io.conveyor.bus.Addresses.EVENT_AWAIT, io.conveyor.pipeline.steps.FlowAwaitStep.ADDRESS);
  }

  private static boolean within(JavaClass c, String root) {
    String p = c.getPackageName();
    return p.equals(root) || p.startsWith(root + ".");
  }
  /** The interfaces and the domain service reach the roles by Redis and the bus, never by their classes. */
  @Test
  void the_api_and_the_domain_import_no_role_package() {
    noClasses().that().resideInAnyPackage("io.conveyor.api..", "io.conveyor.domain..")
        .should().dependOnClassesThat().resideInAnyPackage("io.conveyor.queue..", "io.conveyor.archive..",
            "io.conveyor.webhook..", "io.conveyor.schedule..", "io.conveyor.node..")
        .check(product);
  }

  /** Each HTTP route group is built by the composition root with what it uses; no other package wires them. */
  @Test
  void only_the_composition_root_and_the_api_know_the_route_groups() {
    noClasses().that().resideOutsideOfPackages("io.conveyor", "io.conveyor.api")
        .should().dependOnClassesThat().implement(RouteGroup.class)
        .check(product);
  }

  /** Files grew back past 400 lines within days once before: the size is a rule like the others. */
  @Test
  void no_source_file_of_the_product_is_over_400_lines() throws IOException {
    List<String> big;
    try (java.util.stream.Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      big = files.filter(f -> f.toString().endsWith(".java")).filter(f -> {
        try {
          return Files.readAllLines(f).size() > 400;
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).map(Path::toString).sorted().toList();
    }
    assertEquals(List.of(), big, "files over 400 lines (split them by responsibility)");
  }

  /**
   * The dashboard is plain files (issue 32): JavaScript modules of at most 400 lines each, and nothing in them
   * names another origin (no CDN, no external script, style or font).
   */
  @Test
  void the_dashboard_is_small_modules_that_load_nothing_from_elsewhere() throws IOException {
    List<String> wrong = new java.util.ArrayList<>();
    try (java.util.stream.Stream<Path> files = Files.walk(Path.of("src/main/resources/dashboard"))) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        String text = Files.readString(f);
        if (text.lines().count() > 400) {
          wrong.add(f + ": over 400 lines (split it into modules)");
        }
        if (text.matches("(?s).*\\b(https?:)?//[a-z0-9.-]+\\.[a-z]{2,}/.*")) {
          wrong.add(f + ": names another origin");
        }
      }
    }
    assertEquals(List.of(), wrong);
  }

  /**
   * The phase indexes a failed, retrying or waiting search walks (docs/decisions.md, issue 32) are kept by the
   * scripts that bring a transaction into those phases: each one that ends a transaction or puts it to sleep
   * names the index it adds to, so a new such script cannot forget it.
   */
  @Test
  void every_script_that_ends_a_transaction_frees_its_live_count_and_its_singleton_gate() throws IOException {
    // a singleton's next waiter starts, and the owner's maxLive count drops, in the script that ends the live one
    // (lib/gate.lua, lib/live.lua): an end path that forgot either would hold the key or the count for good
    List<String> missing;
    try (java.util.stream.Stream<Path> files = Files.walk(Path.of("src/main/resources/lua"))) {
      missing = files.filter(f -> f.toString().endsWith(".lua")).filter(f -> {
        try {
          String text = Files.readString(f);
          return text.contains("'processingState', 'complete'")
              && !(text.contains("gate_release(") && text.contains("live_ended("));
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).map(Path::toString).sorted().toList();
    }
    assertEquals(List.of(), missing, "scripts that end a transaction without gate_release and live_ended");
  }

  @Test
  void every_script_that_ends_a_transaction_or_puts_it_to_sleep_keeps_the_phase_index() throws IOException {
    List<String> missing;
    try (java.util.stream.Stream<Path> files = Files.walk(Path.of("src/main/resources/lua"))) {
      missing = files.filter(f -> f.toString().endsWith(".lua")).filter(f -> {
        try {
          String text = Files.readString(f);
          return text.contains("'processingState', 'complete'") && !text.contains("phaseZ:ended")
              || text.contains("'processingState', 'sleeping'") && !text.contains("phaseZ:waiting")
              && !text.contains("phaseZ:retrying");
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).map(Path::toString).sorted().toList();
    }
    assertEquals(List.of(), missing, "scripts that enter an indexed phase without naming its phaseZ");
  }

  /**
   * An idempotency key is built in one place (StepContext.key: step from 1, run suffix from the second run), so
   * http/request, eventbus and Java steps can never disagree on it (docs/decisions.md, issue 33).
   */
  @Test
  void idempotency_keys_are_built_only_by_step_context() throws IOException {
    Pattern byHand = Pattern.compile("txId\\(\\)\\s*\\+\\s*\":\"|\"Idempotency-Key\",\\s*ctx\\.");
    List<String> offenders;
    try (java.util.stream.Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      offenders = files.filter(f -> f.toString().endsWith(".java")).filter(f -> !f.endsWith("StepContext.java"))
          .filter(f -> {
            try {
              return byHand.matcher(Files.readString(f)).find();
            } catch (IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }).map(Path::toString).sorted().toList();
    }
    assertEquals(List.of(), offenders, "idempotency keys built by hand (use StepContext.idempotencyKey())");
  }

  /**
   * Every admin act is audited (README, Audit log) because ApiGate records each request that needs an admin key, by
   * the same list (ApiGate.needsAdmin) it requires the role by: a route under /api/v1 is a client's (transactions,
   * events) or on that list, never neither, so no admin route can be added beside the audit.
   */
  @Test
  void every_api_route_is_a_clients_or_an_audited_admin_route() throws IOException {
    io.conveyor.api.ApiKeys.Principal admin = new io.conveyor.api.ApiKeys.Principal("ops", List.of("admin"), "");
    Pattern route = Pattern.compile("\\.(get|post|put|delete|patch|route)\\(\"(/api/v1/[^\"*]*)\"");
    List<String> neither = new java.util.ArrayList<>();
    try (java.util.stream.Stream<Path> files = Files.walk(Path.of("src/main/java/io/conveyor/api"))) {
      for (Path f : files.filter(x -> x.toString().endsWith(".java")).toList()) {
        var m = route.matcher(Files.readString(f));
        while (m.find()) {
          String path = m.group(2).replaceAll(":[A-Za-z]+", "x");
          boolean client = path.equals("/api/v1/transactions") || path.startsWith("/api/v1/transactions/")
              || path.equals("/api/v1/events");
          if (!client && !io.conveyor.api.ApiGate.needsAdmin(path, admin)) {
            neither.add(f.getFileName() + ": " + m.group(2));
          }
        }
      }
    }
    assertEquals(List.of(), neither, "routes neither a client's nor on ApiGate.needsAdmin (so not audited)");
  }
}
