package io.conveyor.redis;

import io.conveyor.model.Ids;
import io.vertx.redis.client.impl.ZModem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

/**
 * The partitions of a keyspace: how many, each one's hash tag, and which partition a transaction lives in.
 * Keys puts the tags into names; this class alone knows the slot arithmetic behind them.
 */
final class Partitions {
  /** Redis Cluster's hash slots. */
  private static final int SLOTS = 16384;
  private final int count;
  /** Each partition's tag with its braces and a colon, e.g. "{p3-17}:" ("" with one partition). */
  private final String[] tags;
  private final String global;

  Partitions(int count) {
    if (count < 1 || count > 4096) {
      throw new IllegalArgumentException("partitions must be 1 to 4096, got " + count);
    }
    this.count = count;
    this.tags = new String[count];
    for (int p = 0; p < count; p++) {
      tags[p] = count == 1 ? "" : "{" + tagName(p, count) + "}:";
    }
    this.global = count == 1 ? "" : "{g}:";
  }

  /**
   * p<N>-<k> with the smallest k whose slot falls in the N-th of P equal slot ranges: a cluster that splits
   * its slots evenly over its masters (as redis-cli --cluster create does) then gets an even share of the
   * partitions, which a plain p<N> would not promise. Computed the same way on every node.
   */
  static String tagName(int p, int partitions) {
    int from = (int) ((long) p * SLOTS / partitions);
    int to = (int) ((long) (p + 1) * SLOTS / partitions);
    for (int k = 0; ; k++) {
      String name = "p" + p + "-" + k;
      int slot = ZModem.generate(name.getBytes(StandardCharsets.UTF_8));
      if (slot >= from && slot < to) {
        return name;
      }
    }
  }

  int count() {
    return count;
  }

  /** Every partition, 0 to P-1. */
  List<Integer> all() {
    return IntStream.range(0, count).boxed().toList();
  }

  /** Partition p's tag with its braces and a colon ("" with one partition). */
  String tag(int p) {
    return tags[p];
  }

  /** The tag of the few cluster-wide keys ("" with one partition). */
  String globalTag() {
    return global;
  }

  /**
   * The partition of a transaction (or of an id that starts with its txId, as a progress webhook's does):
   * its first four hex digits modulo P. An id of another form, which no start gave out, maps to partition 0
   * and is simply not found there.
   */
  int of(String txId) {
    if (count == 1 || txId == null || txId.length() < 7 || !txId.startsWith("tx-")) {
      return 0;
    }
    try {
      return Integer.parseInt(txId, 3, 7, 16) % count;
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /**
   * The partition a new transaction goes to: with an externalId, fixed by owner and externalId, so the
   * de-dup check of a second start with them runs in the same script; else any.
   */
  int forStart(String owner, String externalId) {
    if (count == 1) {
      return 0;
    }
    if (externalId == null || externalId.isEmpty()) {
      return ThreadLocalRandom.current().nextInt(count);
    }
    return ZModem.generate((owner + ":" + externalId).getBytes(StandardCharsets.UTF_8)) % count;
  }

  /** A fresh txId in a partition. */
  String newTxId(int partition) {
    return count == 1 ? Ids.txId() : Ids.txId(partition);
  }
}
