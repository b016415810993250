package io.conveyor.schedule;

import io.conveyor.model.Schedule;
import io.conveyor.model.TxException;
import io.conveyor.redis.Code;
import io.conveyor.redis.ScheduleStore;
import io.vertx.core.Future;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Schedule files (schedules.dir, one schedule per *.json, its id the file's "id" or its name without .json):
 * read and checked when a node starts (a bad one stops it, naming the file and the field), then published like
 * pipelines: a file is as new as its last change, so it never undoes a schedule uploaded after it was written.
 */
public final class ScheduleFiles {
  private static final Logger log = LoggerFactory.getLogger(ScheduleFiles.class);

  private ScheduleFiles() {
  }

  /** A schedule read from a file, with the file's last change (ms). */
  public record Loaded(Schedule schedule, long modified, Path file) {
  }

  /** The schedules of a directory; none when dir is empty or does not exist. */
  public static List<Loaded> load(String dir) {
    if (dir == null || dir.isBlank() || !Files.isDirectory(Path.of(dir))) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(Path.of(dir))) {
      List<Loaded> out = new ArrayList<>();
      for (Path f : files.filter(p -> p.toString().endsWith(".json")).sorted().toList()) {
        String name = f.getFileName().toString();
        try {
          JsonObject j = new JsonObject(Files.readString(f));
          String id = j.getValue("id") instanceof String s ? s : name.substring(0, name.length() - 5);
          out.add(new Loaded(Schedule.fromJson(j, id), Files.getLastModifiedTime(f).toMillis(), f));
        } catch (IOException e) {
          throw new IllegalArgumentException(f + ": cannot read it (" + e.getMessage() + ")");
        } catch (DecodeException | ClassCastException e) {
          throw new IllegalArgumentException(f + ": not a JSON object");
        } catch (IllegalArgumentException | TxException e) {
          throw new IllegalArgumentException(f + ": " + e.getMessage());
        }
      }
      return out;
    } catch (IOException e) {
      throw new IllegalArgumentException("schedules.dir " + dir + ": cannot list it (" + e.getMessage() + ")");
    }
  }

  /** Publishes them (newest publication wins), each with its next fire time from now. */
  public static Future<Void> publish(ScheduleStore store, List<Loaded> loaded, long now) {
    List<Future<Code>> each = new ArrayList<>();
    for (Loaded l : loaded) {
      Schedule s = l.schedule();
      each.add(store.put(s.id(), s.toJson(), l.modified(), s.paused(), ScheduleStore.Next.after(s, now)).onSuccess(code -> {
        if (code == Code.KEPT) {
          log.info("schedule {}: kept the version uploaded after {} was last changed", s.id(), l.file());
        }
      }));
    }
    return Future.all(each).mapEmpty();
  }
}
