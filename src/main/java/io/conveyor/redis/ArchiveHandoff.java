package io.conveyor.redis;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Finished transactions handed to the archive leader, and deleted from Redis once it confirms them. */
public final class ArchiveHandoff extends Store {
  public ArchiveHandoff(StoreContext r) {
    super(r);
  }

  /** A transaction handed out for archiving: its stored fields, and the stamp that confirms it. */
  public record ToArchive(String txId, String stamp, JsonObject fields) {
  }

  /** What archive.lua answered: whether the caller leads, how many it confirmed, and the next batch. */
  public record ArchiveBatch(boolean leader, int confirmed, List<ToArchive> batch) {
  }

  /**
   * Confirms what the caller wrote to the archive (deleting it from Redis), then, if the caller leads the
   * archive role, takes up to max due transactions, each held for it for hold before it is due again (see
   * archive.lua).
   */
  /**
   * Gives handed-out transactions back: they are due at once (ZADD XX, so one confirmed or gone meanwhile
   * stays gone), for the next leader instead of after their hold.
   */
  public Future<Void> release(int p, List<ToArchive> held) {
    if (held.isEmpty()) {
      return Future.succeededFuture();
    }
    io.vertx.redis.client.Request zadd = io.vertx.redis.client.Request.cmd(io.vertx.redis.client.Command.ZADD)
        .arg(keys.toArchiveZ(p)).arg("XX");
    String now = r.now();
    held.forEach(t -> zadd.arg(now).arg(t.txId()));
    return r.send(zadd).mapEmpty();
  }

  /** The same in partition p; every written transaction must be of it. */
  public Future<ArchiveBatch> archiveBatch(int p, String nodeId, List<ToArchive> written, int max, Duration lease,
                                           Duration grace, Duration hold) {
    List<String> k = new ArrayList<>(8 + written.size());
    k.addAll(List.of(keys.toArchiveZ(p), keys.lock1(LeaderRole.ARCHIVE, p), keys.lock2(LeaderRole.ARCHIVE, p),
        keys.exceptionZ(p), keys.liveZ(p), keys.phaseZ(p, "ended"), keys.phaseZ(p, "retrying"),
        keys.phaseZ(p, "waiting")));
    List<String> args = new ArrayList<>(7 + 2 * written.size());
    args.addAll(List.of(nodeId, r.now(), Integer.toString(max), Long.toString(lease.toMillis()),
        Long.toString(grace.toMillis()), keys.stateH(p, ""), Long.toString(hold.toMillis())));
    for (ToArchive t : written) {
      k.add(keys.stateH(t.txId()));
      args.add(t.txId());
      args.add(t.stamp());
    }
    return r.run(r.scripts().archive, k, args).map(reply -> {
      List<ToArchive> batch = new ArrayList<>((reply.size() - 2) / 3);
      for (int i = 2; i + 2 < reply.size(); i += 3) {
        batch.add(new ToArchive(reply.get(i).toString(), reply.get(i + 1).toString(),
            Replies.flatHash(reply.get(i + 2))));
      }
      return new ArchiveBatch(reply.get(0).toInteger() == 1, reply.get(1).toInteger(), batch);
    });
  }
}
