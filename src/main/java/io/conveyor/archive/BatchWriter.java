package io.conveyor.archive;

import io.conveyor.database.ArchiveStore;
import io.conveyor.database.ArchivedTx;
import io.conveyor.redis.ArchiveHandoff.ToArchive;
import io.conveyor.redis.QuarantineStore.Refused;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Writes a batch to the archive so that one row the database refuses cannot hold back the others. A batch
 * refused with a data error (DATA_ERRORS, by SQLState class) is split in halves until the rows that fail
 * alone are found: those come back as refused (to be quarantined), the rest as written. Anything else (the
 * database down, a timeout, a missing table) fails the whole write, as an outage, and quarantines nothing;
 * so does a batch of three rows or more of which every one fails alone (a trigger or constraint that refuses
 * everything is an outage of a kind, not bad rows).
 */
final class BatchWriter {
  /**
   * SQLState classes of a row's own fault: 22 data exception, 23 integrity constraint, 54 program limit (a
   * value too large), P0 raised by PL/pgSQL (a trigger refusing the row).
   */
  static final Set<String> DATA_ERRORS = Set.of("22", "23", "54", "P0");

  /**
   * From this many rows, a batch whose every row is refused alone is an outage. Fewer prove little: two bad
   * rows may well come together when the archive is quiet, and must not stall it.
   */
  static final int ALL_REFUSED_IS_AN_OUTAGE = 3;

  private final ArchiveStore archive;
  private final Duration timeout;

  BatchWriter(ArchiveStore archive, Duration timeout) {
    this.archive = archive;
    this.timeout = timeout;
  }

  /** What a write came to: the rows now in the archive, and those refused alone. */
  record Outcome(List<ToArchive> written, List<Refused> refused) {
  }

  /** Writes the batch, splitting it on data errors; fails only on an outage. */
  Future<Outcome> write(List<ToArchive> batch) {
    List<Refused> unreadable = new ArrayList<>();
    List<Row> rows = new ArrayList<>(batch.size());
    for (ToArchive t : batch) {
      try {
        rows.add(new Row(t, ArchivedTx.fromState(t.txId(), t.fields())));
      } catch (RuntimeException e) {
        unreadable.add(new Refused(t, "its state is unreadable: " + e, null));
      }
    }
    return attempt(rows).compose(o -> {
      if (rows.size() >= ALL_REFUSED_IS_AN_OUTAGE && o.refused().size() == rows.size()) {
        Refused first = o.refused().get(0);
        return Future.failedFuture(new IllegalStateException("every one of " + rows.size() + " transactions was "
            + "refused alone (so not one bad row): " + first.message()));
      }
      List<Refused> refused = new ArrayList<>(unreadable);
      refused.addAll(o.refused());
      return Future.succeededFuture(new Outcome(o.written(), refused));
    });
  }

  private record Row(ToArchive handed, ArchivedTx tx) {
  }

  private Future<Outcome> attempt(List<Row> rows) {
    if (rows.isEmpty()) {
      return Future.succeededFuture(new Outcome(List.of(), List.of()));
    }
    return archive.write(rows.stream().map(Row::tx).toList()).timeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .map(v -> new Outcome(rows.stream().map(Row::handed).toList(), List.<Refused>of()))
        .recover(e -> {
          String state = sqlState(e);
          if (state == null || state.length() < 2 || !DATA_ERRORS.contains(state.substring(0, 2))) {
            return Future.failedFuture(e);
          }
          if (rows.size() == 1) {
            return Future.succeededFuture(new Outcome(List.of(), List.of(new Refused(rows.get(0).handed(),
                String.valueOf(e.getMessage()), state))));
          }
          int half = rows.size() / 2;
          return attempt(rows.subList(0, half)).compose(a -> attempt(rows.subList(half, rows.size()))
              .map(b -> new Outcome(concat(a.written(), b.written()), concat(a.refused(), b.refused()))));
        });
  }

  private static <T> List<T> concat(List<T> a, List<T> b) {
    List<T> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /** The SQLState of a database's refusal (JDBC or the reactive client), or null when it is not one. */
  static String sqlState(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof java.sql.SQLException s) {
        return s.getSQLState();
      }
      if (c instanceof io.vertx.sqlclient.DatabaseException d) {
        return d.getSqlState();
      }
    }
    return null;
  }
}
