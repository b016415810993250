package io.conveyor;

import io.conveyor.config.Config;
import io.conveyor.config.ConfigException;
import io.conveyor.config.ConfigLoader;
import io.conveyor.config.TlsPair;
import io.conveyor.crypto.LocalKeyProvider;
import io.conveyor.pipeline.PipelineException;
import io.conveyor.pipeline.StepRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads the config, starts a node, and stops it on SIGTERM: java -jar conveyor.jar [--config PATH]. Any other
 * arguments are a command of the operator's command line (Cli): java -jar conveyor.jar help lists them.
 */
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
    if (Cli.handles(args)) {
      // a command (or help): the command line reads the config itself, when the command needs it; what is logged
      // on the way goes to stderr, so stdout is the command's output alone
      LogFormat.commandLine();
      System.exit(Cli.main(args));
      return;
    }
    Config config;
    try {
      config = ConfigLoader.load(configFile(args), System.getenv());
      if (config.security().httpTls().enabled() && config.node().has("api") && config.http().port() > 0) {
        TlsPair.load(config.security().httpTls()); // a pair it cannot serve stops the node before it starts anything
      }
      if (config.security().busTls().enabled() && config.cluster().enabled()) {
        BusTrust.loadNode(config.security().busTls(), Clock.systemUTC()); // the pair, the CA signed it, a node subject
      }
      Config.BridgeTls bridge = config.security().bridgeTls();
      if (bridge.enabled() && config.bridge().tcpPort() > 0) {
        TlsPair.load(bridge.section(), bridge.certFile(), bridge.keyFile());
      }
      if (!config.security().encryption().masterKey().isEmpty()) {
        LocalKeyProvider.fromConfig(config.security().encryption(), System.getenv()); // a key it cannot read: exit 2
      }
    } catch (ConfigException | IllegalArgumentException e) {
      System.err.println("conveyor: " + e.getMessage());
      System.exit(2);
      return;
    }
    if (config.logging().format().equals("json")) {
      LogFormat.json();
    }
    String plainBus = NodeCluster.plainBusWarning(config);
    if (plainBus != null) {
      log.warn(plainBus);
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

  /** The config file of a node: --config PATH, else conf/config.json if there is one (Cli.handles took the rest). */
  static Path configFile(String[] args) {
    String path = args.length == 0 ? null : args[0].startsWith("--config=") ? args[0].substring(9)
        : args.length == 2 ? args[1] : "";
    if (path != null && path.isEmpty()) {
      throw new IllegalArgumentException("--config needs a path");
    }
    return configFile(path == null ? null : Path.of(path));
  }

  /** The config file named (refused when it is not a file), or conf/config.json if there is one, or none. */
  static Path configFile(Path given) {
    if (given != null) {
      if (!Files.isRegularFile(given)) {
        throw new IllegalArgumentException("--config " + given + ": no such file");
      }
      return given;
    }
    Path shipped = Path.of("conf/config.json");
    return Files.isRegularFile(shipped) ? shipped : null;
  }
}
