package io.conveyor.model;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import io.vertx.core.json.JsonObject;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A schedule: it starts a transaction of a pipeline (with input, owner, webhook, metadata, priority) at each fire
 * time of a cron expression in a time zone, or every fixed interval (aligned to the epoch, so every node computes
 * the same fire times), between from and until when given. overlap says what a fire does while the schedule's
 * previous run still runs; catchUp what happens to fire times missed while no scheduler ran; jitter delays each
 * fire by a fixed amount of its own in [0, jitter) so schedules that share a minute spread out.
 */
public record Schedule(String id, String pipeline, String cron, Duration every, ZoneId timeZone, JsonObject input,
                       String owner, String webhook, JsonObject metadata, Integer priority, Overlap overlap,
                       CatchUp catchUp, int catchUpLimit, Duration jitter, Instant from, Instant until,
                       boolean paused) {

  /** What a fire does while the previous run of the schedule has not ended. */
  public enum Overlap {
    SKIP("skip"), ALLOW("allow"), CANCEL_PREVIOUS("cancelPrevious"), QUEUE_ONE("queueOne");

    public final String wire;

    Overlap(String wire) {
      this.wire = wire;
    }
  }

  /** What happens to fire times missed while no scheduler ran (longer ago than a scheduler round allows). */
  public enum CatchUp {
    LATEST("latest"), ALL("all"), NONE("none");

    public final String wire;

    CatchUp(String wire) {
      this.wire = wire;
    }
  }

  public static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}");
  private static final Set<String> FIELDS = Set.of("id", "pipeline", "cron", "every", "timeZone", "input", "owner",
      "webhook", "metadata", "priority", "overlap", "catchUp", "catchUpLimit", "jitter", "from", "until", "paused");
  private static final CronParser UNIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
  private static final CronParser SECONDS = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(
      CronType.SPRING));

  /** Refuses a name with a control character or an unpaired surrogate (Identifiers), naming the field. */
  private static void clean(String field, String value) {
    String problem = value == null ? null : Identifiers.problem(value);
    if (problem != null) {
      throw new IllegalArgumentException(field + ": " + problem);
    }
  }

  /** Reads a schedule, refusing anything unknown or malformed with the field at fault (IllegalArgumentException). */
  public static Schedule fromJson(JsonObject j, String expectedId) {
    for (String f : j.fieldNames()) {
      if (!FIELDS.contains(f)) {
        throw new IllegalArgumentException("unknown field '" + f + "' (expected " + String.join(", ",
            new TreeSet<>(FIELDS)) + ")");
      }
    }
    String id = j.getValue("id", expectedId) instanceof String s ? s : null;
    clean("id", id);
    if (id == null || !ID.matcher(id).matches()) {
      throw new IllegalArgumentException("id: expected letters, digits, '_', '.' or '-' (at most 64)");
    }
    if (expectedId != null && !expectedId.equals(id)) {
      throw new IllegalArgumentException("id: the body's id must be " + expectedId);
    }
    String pipeline = text(j, "pipeline", true);
    clean("pipeline", pipeline);
    if (!NAME.matcher(pipeline).matches()) {
      throw new IllegalArgumentException("pipeline: expected a pipeline name");
    }
    String cron = text(j, "cron", false);
    Duration every = j.containsKey("every") ? duration(j, "every") : null;
    if ((cron == null) == (every == null)) {
      throw new IllegalArgumentException("cron: give cron (e.g. \"0 7 * * MON-FRI\") or every (e.g. \"30s\"), "
          + "not both");
    }
    if (every != null && every.toMillis() < 1000) {
      throw new IllegalArgumentException("every: at least 1s, got " + Durations.format(every));
    }
    if (cron != null) {
      parse(cron);
    }
    ZoneId zone;
    try {
      zone = ZoneId.of(j.getValue("timeZone", "UTC") instanceof String s ? s : "");
    } catch (DateTimeException e) {
      throw new IllegalArgumentException("timeZone: expected a zone such as UTC or Europe/Paris, got "
          + j.getValue("timeZone"));
    }
    JsonObject input = object(j, "input");
    String owner = text(j, "owner", true);
    clean("owner", owner);
    if (!NAME.matcher(owner).matches()) {
      throw new IllegalArgumentException("owner: expected a name of letters, digits, '_', '.', '@' or '-'");
    }
    String webhook = text(j, "webhook", false);
    if (webhook != null) {
      WebhookUrl.check(webhook);
    }
    JsonObject metadata = object(j, "metadata");
    Object p = j.getValue("priority");
    if (p != null && (!(p instanceof Integer level) || level < 0 || level > 9)) {
      throw new IllegalArgumentException("priority: expected a whole number from 0 to 9, got " + p);
    }
    Overlap overlap = choice(j, "overlap", Overlap.values(), Overlap.SKIP);
    CatchUp catchUp = choice(j, "catchUp", CatchUp.values(), CatchUp.LATEST);
    Object limit = j.getValue("catchUpLimit", 100);
    if (!(limit instanceof Integer l) || l < 1 || l > 1000) {
      throw new IllegalArgumentException("catchUpLimit: expected a whole number from 1 to 1000, got " + limit);
    }
    Duration jitter = j.containsKey("jitter") ? duration(j, "jitter") : Duration.ZERO;
    Instant from = instant(j, "from");
    Instant until = instant(j, "until");
    if (from != null && until != null && !until.isAfter(from)) {
      throw new IllegalArgumentException("until: must be after from");
    }
    Object paused = j.getValue("paused", false);
    if (!(paused instanceof Boolean b)) {
      throw new IllegalArgumentException("paused: expected true or false");
    }
    return new Schedule(id, pipeline, cron, every, zone, input, owner, webhook, metadata, (Integer) p, overlap,
        catchUp, (Integer) limit, jitter, from, until, b);
  }

  /** The definition in a fixed field order, as stored in Redis and answered by the API. */
  public JsonObject toJson() {
    JsonObject j = new JsonObject().put("id", id).put("pipeline", pipeline);
    if (cron != null) {
      j.put("cron", cron).put("timeZone", timeZone.getId());
    } else {
      j.put("every", Durations.format(every));
    }
    j.put("input", input).put("owner", owner);
    if (webhook != null) {
      j.put("webhook", webhook);
    }
    j.put("metadata", metadata);
    if (priority != null) {
      j.put("priority", priority);
    }
    j.put("overlap", overlap.wire).put("catchUp", catchUp.wire).put("catchUpLimit", catchUpLimit);
    if (!jitter.isZero()) {
      j.put("jitter", Durations.format(jitter));
    }
    if (from != null) {
      j.put("from", from.toString());
    }
    if (until != null) {
      j.put("until", until.toString());
    }
    return j.put("paused", paused);
  }

  /** The first fire time strictly after t (ms), or -1 when there is none (past until). */
  public long nextAfter(long t) {
    long after = from != null && from.toEpochMilli() > t ? from.toEpochMilli() - 1 : t;
    long next;
    if (every != null) {
      long step = every.toMillis();
      next = Math.floorDiv(after, step) * step + step;
    } else {
      Optional<ZonedDateTime> n = ExecutionTime.forCron(parse(cron)).nextExecution(
          Instant.ofEpochMilli(after).atZone(timeZone));
      if (n.isEmpty()) {
        return -1;
      }
      next = n.get().toInstant().toEpochMilli();
    }
    return until != null && next > until.toEpochMilli() ? -1 : next;
  }

  /** Up to n fire times strictly after t (ms). */
  public List<Long> next(long t, int n) {
    List<Long> out = new ArrayList<>(n);
    long at = t;
    while (out.size() < n) {
      at = nextAfter(at);
      if (at < 0) {
        break;
      }
      out.add(at);
    }
    return out;
  }

  /** This fire time's own delay in [0, jitter): the same wherever it is computed. */
  public long jitterOf(long fireMs) {
    long j = jitter.toMillis();
    return j == 0 ? 0 : Math.floorMod((id + "@" + fireMs).hashCode(), j);
  }

  private static Cron parse(String cron) {
    String[] fields = cron.trim().split("\\s+");
    try {
      return (fields.length == 6 ? SECONDS : UNIX).parse(cron.trim()).validate();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("cron: " + cron + " is not a cron expression (minute hour day-of-month "
          + "month day-of-week, or with seconds first): " + e.getMessage());
    }
  }

  private static String text(JsonObject j, String field, boolean required) {
    Object v = j.getValue(field);
    if (v == null) {
      if (required) {
        throw new IllegalArgumentException(field + ": is required");
      }
      return null;
    }
    if (!(v instanceof String s) || s.isBlank() || s.length() > 2048) {
      throw new IllegalArgumentException(field + ": expected a non-empty string");
    }
    return s;
  }

  private static JsonObject object(JsonObject j, String field) {
    Object v = j.getValue(field, new JsonObject());
    if (!(v instanceof JsonObject o)) {
      throw new IllegalArgumentException(field + ": expected a JSON object");
    }
    return o;
  }

  private static Duration duration(JsonObject j, String field) {
    return Durations.read(field, j.getValue(field));
  }

  private static Instant instant(JsonObject j, String field) {
    Object v = j.getValue(field);
    if (v == null) {
      return null;
    }
    try {
      return Instant.parse(v instanceof String s ? s : "");
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(field + ": expected an ISO-8601 time such as 2026-12-01T07:00:00Z");
    }
  }

  private static <E extends Enum<E>> E choice(JsonObject j, String field, E[] values, E fallback) {
    Object v = j.getValue(field);
    if (v == null) {
      return fallback;
    }
    List<String> names = new ArrayList<>();
    for (E e : values) {
      String wire = e instanceof Overlap o ? o.wire : ((CatchUp) e).wire;
      names.add(wire);
      if (wire.equals(v)) {
        return e;
      }
    }
    throw new IllegalArgumentException(field + ": expected one of " + String.join(", ", names) + ", got " + v);
  }

  /**
   * The start request of this schedule's fire: its pipeline, owner, input, webhook and priority; its metadata with
   * schedule {id, fireTime}; externalId schedule:&lt;id&gt;:&lt;fire ms&gt;, so a fire driven twice starts once.
   */
  public JsonObject startBody(long fire) {
    JsonObject body = new JsonObject().put("type", pipeline()).put("owner", owner()).put("input", input().copy())
        .put("metadata", metadata().copy().put("schedule", new JsonObject().put("id", id())
            .put("fireTime", Instant.ofEpochMilli(fire).toString())))
        .put("externalId", "schedule:" + id() + ":" + fire);
    if (webhook() != null) {
      body.put("webhook", webhook());
    }
    if (priority() != null) {
      body.put("priority", priority());
    }
    return body;
  }
}
