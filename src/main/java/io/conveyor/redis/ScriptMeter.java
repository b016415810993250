package io.conveyor.redis;

/** Where a link reports each script's round trip (the node's metrics; nothing in a plain client). */
@FunctionalInterface
public interface ScriptMeter {
  ScriptMeter NONE = (name, nanos) -> { };

  void script(String name, long nanos);
}
