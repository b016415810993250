package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.ConfigLoader;
import io.conveyor.pipeline.PipelineException;
import io.conveyor.pipeline.StepRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reads the config, starts a node, and stops it on SIGTERM. Usage: java -jar conveyor.jar [--config PATH] */
public final class Main {
  private Main() {
  }

  public static void main(String[] args) {
    if (System.getProperty("logback.configurationFile") == null && Files.exists(Path.of("conf/logback.xml"))) {
      System.setProperty("logback.configurationFile", "conf/logback.xml");
    }
    System.setProperty("vertx.logger-delegate-factory-class-name", "io.vertx.core.logging.SLF4JLogDelegateFactory");
    System.setProperty("hazelcast.logging.type", "slf4j");
    Logger log = LoggerFactory.getLogger(Main.class);
    Config config;
    List<String> command = new ArrayList<>(List.of(args));
    if (!command.isEmpty() && command.get(0).equals("new-key")) {
      System.exit(Cli.newKey(command));
    }
    boolean cli = Cli.handles(args);
    try {
      config = ConfigLoader.load(configFile(cli ? withoutCommand(command) : args), System.getenv());
    } catch (ConfigException | IllegalArgumentException e) {
      System.err.println("conveyor: " + e.getMessage());
      System.exit(2);
      return;
    }
    if (cli) {
      System.exit(Cli.run(command, config));
    }
    if (config.logging().format().equals("json")) {
      LogFormat.json();
    }
    Node node;
    try {
      // Node.start stops what it started when a part fails (each stop bounded), then fails
      node = Node.start(config, Clock.systemUTC(), StepRegistry.withBuiltIns()).await(2, TimeUnit.MINUTES);
    } catch (Throwable e) {
      // one line says what to fix; the stack trace is there for whoever turns on debug logging
      log.error("conveyor: the node did not start: {}", e.getMessage());
      log.debug("why the node did not start", e);
      System.exit(e instanceof ConfigException || e instanceof PipelineException ? 2 : 1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      log.info("stopping node {}", node.nodeId());
      try {
        node.stop().await(config.node().drainTime().toMillis() + 30_000, TimeUnit.MILLISECONDS);
        log.info("node {} stopped", node.nodeId());
      } catch (Throwable e) {
        log.warn("node {} did not stop cleanly: {}", node.nodeId(), e.getMessage());
      }
    }, "conveyor-shutdown"));
  }

  /** The --config option of a client command, taken out of the command's arguments. */
  private static String[] withoutCommand(List<String> command) {
    int i = command.indexOf("--config");
    if (i < 0) {
      return new String[0];
    }
    String[] option = command.subList(i, Math.min(i + 2, command.size())).toArray(String[]::new);
    command.subList(i, Math.min(i + 2, command.size())).clear();
    return option;
  }

  static Path configFile(String[] args) {
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--config")) {
        if (i + 1 == args.length) {
          throw new IllegalArgumentException("--config needs a path");
        }
        Path p = Path.of(args[i + 1]);
        if (!Files.isRegularFile(p)) {
          throw new IllegalArgumentException("--config " + p + ": no such file");
        }
        return p;
      }
      if (args[i].equals("--help") || args[i].equals("-h")) {
        System.out.println("usage: java -jar target/conveyor.jar [--config PATH]            start a node\n"
            + "       java -jar target/conveyor.jar start TYPE [INPUT_JSON] [--owner NAME] [--external-id ID] [--wait]\n"
            + "       java -jar target/conveyor.jar status TXID [--owner NAME]\n"
            + "       java -jar target/conveyor.jar new-key OWNER [ROLE[+ROLE]]   (client, step, admin)\n"
            + "The config file defaults to conf/config.json; CONVEYOR_* variables override it.");
        System.exit(0);
      }
      throw new IllegalArgumentException("unknown argument " + args[i] + " (usage: [--config PATH])");
    }
    Path shipped = Path.of("conf/config.json");
    return Files.isRegularFile(shipped) ? shipped : null;
  }
}
