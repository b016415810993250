package io.conveyor.model;

/** The status a client sees: running until final, then one of the final ones. */
public enum TxStatus {
  RUNNING("running"), SUCCESS("success"), FAILED("failed"), ABORTED("aborted"), CANCELLED("cancelled"),
  TIMEOUT("timeout"), INTERNAL_ERROR("internal-error");

  private final String wire;

  TxStatus(String wire) {
    this.wire = wire;
  }

  public String wire() {
    return wire;
  }

  public boolean isFinal() {
    return this != RUNNING;
  }

  public static TxStatus fromWire(String s) {
    for (TxStatus t : values()) {
      if (t.wire.equals(s)) {
        return t;
      }
    }
    throw new IllegalArgumentException("unknown status '" + s + "'");
  }

  @Override
  public String toString() {
    return wire;
  }
}
