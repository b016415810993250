package io.conveyor.pipeline;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.MDC;

/**
 * The logger a step gets: every line it writes, whenever it writes it (also from a callback long after the
 * step was called), carries txId, step and nodeId in the MDC, so text logs can show them and JSON logs hold
 * them as fields.
 */
public final class StepLog {
  private StepLog() {
  }

  public static Logger of(Logger target, String txId, int step, String nodeId) {
    String stepText = Integer.toString(step);
    return (Logger) Proxy.newProxyInstance(Logger.class.getClassLoader(), new Class<?>[] {Logger.class},
        (proxy, method, args) -> {
          String oldTx = MDC.get("txId");
          String oldStep = MDC.get("step");
          String oldNode = MDC.get("nodeId");
          MDC.put("txId", txId);
          MDC.put("step", stepText);
          MDC.put("nodeId", nodeId);
          try {
            return method.invoke(target, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          } finally {
            restore("txId", oldTx);
            restore("step", oldStep);
            restore("nodeId", oldNode);
          }
        });
  }

  private static void restore(String key, String old) {
    if (old == null) {
      MDC.remove(key);
    } else {
      MDC.put(key, old);
    }
  }
}
