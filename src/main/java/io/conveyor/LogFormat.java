package io.conveyor;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.OutputStreamAppender;
import java.util.Iterator;
import org.slf4j.LoggerFactory;

/**
 * logging.format = json: every console appender writes one JSON object per line (logback's JsonEncoder:
 * time, level, logger, message, and the MDC, where step log lines carry txId, step and nodeId).
 */
final class LogFormat {
  private LogFormat() {
  }

  /**
   * A command (not a node): the console appenders write to stderr, so stdout holds only what the command prints
   * (its --json documents stay one per line, whatever a store logs on the way). Its own audit entry is not echoed
   * there (it goes to Redis; a failure to write it is still said).
   */
  static void commandLine() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    context.getLogger(io.conveyor.api.AuditLog.class).setLevel(ch.qos.logback.classic.Level.WARN);
    ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
      if (it.next() instanceof ConsoleAppender<ILoggingEvent> console && !"System.err".equals(console.getTarget())) {
        console.stop();
        console.setTarget("System.err");
        console.start();
      }
    }
  }

  static void json() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
      if (it.next() instanceof OutputStreamAppender<ILoggingEvent> out) {
        JsonEncoder encoder = new JsonEncoder();
        encoder.setContext(context);
        encoder.setWithFormattedMessage(true);
        encoder.setWithMessage(false);
        encoder.setWithArguments(false);
        encoder.setWithContext(false);
        encoder.setWithSequenceNumber(false);
        encoder.setWithNanoseconds(false);
        encoder.start();
        out.stop();
        out.setEncoder(encoder);
        out.start();
      }
    }
  }
}
