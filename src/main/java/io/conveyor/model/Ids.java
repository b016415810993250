package io.conveyor.model;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Fresh identifiers: tx-<32 hex> for transactions, node-<16 hex> for nodes (never reused), err-<16 hex>. */
public final class Ids {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Ids() {
  }

  public static String txId() {
    return "tx-" + hex(16);
  }

  /** tx- and 32 hex digits, the first four the partition (Keys.partitionOf reads it back). */
  public static String txId(int partition) {
    return "tx-" + String.format("%04x", partition) + hex(14);
  }

  public static String nodeId() {
    return "node-" + hex(8);
  }

  /** err-<16 hex>: names one unexpected failure in an answer and in the log line about it. */
  public static String errorId() {
    return "err-" + hex(8);
  }

  public static boolean isTxId(String s) {
    return s != null && s.matches("tx-[0-9a-f]{32}");
  }

  private static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }
}
