package io.conveyor.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A run of alike starts shares its key strings, and every start still gets exactly the keys Keys names. */
class StartKeysTest {
  private final Keys keys = new Keys("t:", 4);

  @Test
  void each_start_gets_its_own_keys_and_alike_ones_share_them() {
    List<String[]> starts = List.of(new String[] {"0", "g", "pay", "acme"}, new String[] {"0", "g", "pay", "acme"},
        new String[] {"0", "g", "pay", "zeta"}, new String[] {"0", "g", "ship", "zeta"},
        new String[] {"0", "h", "ship", "zeta"}, new String[] {"1", "h", "ship", "zeta"},
        new String[] {"1", "h", "ship", "zeta"}, new String[] {"1", "g", "pay", "acme"});
    StartKeys names = StartKeys.NONE;
    for (String[] s : starts) {
      int p = Integer.parseInt(s[0]);
      StartKeys before = names;
      names = names.of(keys, p, s[1], s[2], s[3]);
      assertEquals(keys.pipelineInPartitionH(p, s[2]), names.pipeline);
      assertEquals(keys.qInZ(p, s[1]), names.in);
      assertEquals(keys.qRingL(p, s[1]), names.ring);
      assertEquals(keys.qFairH(p, s[1]), names.fair);
      assertEquals(keys.qOwnerZ(p, s[1], s[3]), names.ownerQueue);
      if (before != StartKeys.NONE && before.in.equals(names.in) && before.pipeline.equals(names.pipeline)
          && before.ownerQueue.equals(names.ownerQueue)) {
        assertSame(before, names, "an alike start reuses the keys");
      }
    }
  }
}
