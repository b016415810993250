package io.conveyor.config;

/** A setting that cannot be used; the message is one line naming the key and the expected form. */
public final class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}
