package io.conveyor;

import io.conveyor.domain.Transactions;
import io.conveyor.config.Config;
import io.conveyor.model.TxException;
import io.conveyor.model.TxSummary;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * A client in the jar, for trying a node from a shell: start a transaction or read one, through the same
 * scripts the node uses, on the Redis of the config. Prints the summary as one JSON line.
 *   start TYPE [INPUT_JSON] [--owner NAME] [--external-id ID] [--delay D | --start-at TIME] [--wait]
 *   status TXID [--owner NAME]
 *   cancel TXID [--owner NAME]
 *   retry TXID [--owner NAME] [--from-start]
 *   group pause|drain|resume|status GROUP [--wait]   (drain --wait: until nothing of it is in flight)
 *   schedule list | schedule show|pause|resume|trigger ID
 */
final class Cli {
  private static final long WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(60);

  private Cli() {
  }

  static boolean handles(String[] args) {
    return args.length > 0 && List.of("start", "status", "cancel", "retry", "group", "schedule", "new-key").contains(args[0]);
  }

  /**
   * new-key OWNER [ROLE[+ROLE]] (client, step, admin): a fresh random API key, and the entry for api.keys that holds only its
   * hash. The key is printed once, here; config and logs never see it.
   */
  static int newKey(List<String> args) {
    if (args.size() < 2 || !args.get(1).matches("[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}")) {
      System.err.println("usage: new-key OWNER [ROLE[+ROLE]]   (roles: client, step, admin)");
      return 2;
    }
    List<String> roles = List.of((args.size() > 2 ? args.get(2) : "client").split("\\+"));
    for (String role : roles) {
      if (!List.of("client", "step", "admin").contains(role)) {
        System.err.println("conveyor: new-key: no role " + role + io.conveyor.model.Strict.suggestion(role,
            List.of("client", "step", "admin")) + " (roles: client, step, admin; join several with +)");
        return 2;
      }
    }
    byte[] random = new byte[24];
    new java.security.SecureRandom().nextBytes(random);
    String key = "ck_" + java.util.HexFormat.of().formatHex(random);
    JsonObject entry = new JsonObject().put("owner", args.get(1)).put("roles", new io.vertx.core.json.JsonArray(roles))
        .put("sha256", io.conveyor.config.ApiKeyHash.of(key));
    System.out.println("key:   " + key);
    System.out.println("entry: " + entry.encode() + "   (add it to api.keys in the config)");
    return 0;
  }

  /** Runs the command; the exit code is 0 on success, 1 when refused, 2 for bad usage. */
  static int run(List<String> args, Config config) {
    Vertx vertx = Vertx.vertx();
    try {
      Transactions tx = Transactions.client(vertx, config);
      String owner = option(args, "--owner", "cli");
      if (args.get(0).equals("group")) {
        return group(vertx, tx, args);
      }
      if (args.get(0).equals("schedule")) {
        return schedule(tx, args);
      }
      TxSummary s = switch (args.get(0)) {
        case "start" -> start(vertx, tx, args, owner);
        case "cancel" -> tx.cancel(args.get(1), owner).await();
        case "retry" -> tx.rerun(args.get(1), owner, args.contains("--from-start")).await();
        default -> tx.status(args.get(1), owner).await();
      };
      System.out.println(s.toJson().encode());
      return 0;
    } catch (TxException e) {
      System.err.println("conveyor: " + e.toJson().encode());
      return 1;
    } catch (io.conveyor.config.ConfigException e) {
      System.err.println("conveyor: " + e.getMessage());
      return 2;
    } catch (IllegalArgumentException | IndexOutOfBoundsException | DecodeException e) {
      System.err.println("conveyor: " + e.getMessage() + "\nusage: start TYPE [INPUT_JSON] [--owner NAME] "
          + "[--external-id ID] [--delay D | --start-at TIME] [--wait] | status TXID [--owner NAME] | cancel TXID [--owner NAME] | retry TXID "
          + "[--owner NAME] [--from-start] | group pause|drain|resume|status GROUP [--wait] | schedule list | schedule "
          + "show|pause|resume|trigger ID");
      return 2;
    } finally {
      vertx.close().await();
    }
  }

  private static TxSummary start(Vertx vertx, Transactions tx, List<String> args, String owner) {
    JsonObject body = new JsonObject().put("type", args.get(1)).put("owner", owner)
        .put("externalId", option(args, "--external-id", null)).put("delay", option(args, "--delay", null))
        .put("startAt", option(args, "--start-at", null))
        .put("input", args.size() > 2 && !args.get(2).startsWith("--") ? new JsonObject(args.get(2)) : new JsonObject());
    TxSummary started = tx.start(body).await();
    return args.contains("--wait") ? untilFinal(vertx, tx, started, System.nanoTime() + WAIT_NANOS).await()
        : started;
  }

  /** schedule list, or schedule ACTION ID: prints the schedules (one JSON line each) or the one acted on. */
  private static int schedule(Transactions tx, List<String> args) {
    io.conveyor.api.ScheduleAdmin admin = new io.conveyor.api.ScheduleAdmin(tx.schedules(), tx, tx.clock());
    String action = args.get(1);
    if (action.equals("list")) {
      admin.list().await().getJsonArray("schedules").forEach(s -> System.out.println(((JsonObject) s).encode()));
      return 0;
    }
    String id = args.get(2);
    JsonObject out = switch (action) {
      case "show" -> admin.get(id).await();
      case "pause" -> admin.setPaused(id, true, "cli").await();
      case "resume" -> admin.setPaused(id, false, "cli").await();
      case "trigger" -> admin.trigger(id).await();
      default -> throw new IllegalArgumentException("schedule: expected list, show, pause, resume or trigger, got "
          + action);
    };
    System.out.println(out.encode());
    return 0;
  }

  /** group ACTION GROUP: prints the group's state as one JSON line; drain --wait prints again once drained. */
  private static int group(Vertx vertx, Transactions tx, List<String> args) {
    String action = args.get(1);
    if (!List.of("pause", "drain", "resume", "status").contains(action)) {
      throw new IllegalArgumentException("group: expected pause, drain, resume or status, got " + action);
    }
    String group = args.get(2);
    var s = tx.group(group, action.equals("status") ? "read" : action, "cli").await();
    System.out.println(s.toJson().encode());
    if (action.equals("drain") && args.contains("--wait")) {
      long deadline = System.nanoTime() + WAIT_NANOS * 5;
      while (s.inFlight() > 0 && s.state().equals("draining") && System.nanoTime() - deadline < 0) {
        Promise<Void> tick = Promise.promise();
        vertx.setTimer(200, t -> tick.complete());
        tick.future().await();
        s = tx.group(group, "read", "cli").await();
      }
      System.out.println(s.toJson().encode());
      return s.inFlight() == 0 ? 0 : 1;
    }
    return 0;
  }

  /** Polls until the transaction ends or the deadline (System.nanoTime) passes. */
  private static Future<TxSummary> untilFinal(Vertx vertx, Transactions tx, TxSummary s, long deadline) {
    if (s.status().isFinal() || System.nanoTime() - deadline > 0) {
      return Future.succeededFuture(s);
    }
    Promise<Void> tick = Promise.promise();
    vertx.setTimer(20, t -> tick.complete());
    return tick.future().compose(v -> tx.status(s.txId(), s.owner())).compose(n -> untilFinal(vertx, tx, n, deadline));
  }

  private static String option(List<String> args, String name, String fallback) {
    int i = args.indexOf(name);
    if (i < 0) {
      return fallback;
    }
    if (i + 1 >= args.size()) {
      throw new IllegalArgumentException(name + " needs a value");
    }
    return args.get(i + 1);
  }
}
