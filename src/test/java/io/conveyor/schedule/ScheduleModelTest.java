package io.conveyor.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.conveyor.model.Schedule;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Schedules as definitions: what is accepted, and the fire times cron-utils computes for them. */
class ScheduleModelTest {

  private static Schedule of(String json) {
    return Schedule.fromJson(new JsonObject(json.replace('\'', '"')), null);
  }

  private static long at(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  private static List<String> fires(Schedule s, String after, int n) {
    return s.next(at(after), n).stream().map(t -> Instant.ofEpochMilli(t).toString()).toList();
  }

  @Test
  void a_cron_in_a_time_zone_fires_at_local_time_across_both_daylight_saving_changes() {
    Schedule s = of("{'id':'report','pipeline':'report','owner':'acme','cron':'0 7 * * *','timeZone':'Europe/Paris'}");
    // Paris goes from UTC+1 to UTC+2 on 2026-03-29 and back on 2026-10-25: 07:00 local is 06:00Z, then 05:00Z
    assertEquals(List.of("2026-03-28T06:00:00Z", "2026-03-29T05:00:00Z", "2026-03-30T05:00:00Z"),
        fires(s, "2026-03-27T12:00:00Z", 3));
    assertEquals(List.of("2026-10-24T05:00:00Z", "2026-10-25T06:00:00Z", "2026-10-26T06:00:00Z"),
        fires(s, "2026-10-23T12:00:00Z", 3));
  }

  @Test
  void a_local_time_skipped_by_the_spring_change_does_not_fire_twice_and_weekdays_hold() {
    Schedule s = of("{'id':'r','pipeline':'p','owner':'acme','cron':'30 2 * * *','timeZone':'Europe/Paris'}");
    List<String> around = fires(s, "2026-03-27T12:00:00Z", 4);
    assertEquals(around.size(), around.stream().distinct().count(), "no fire time twice: " + around);
    Schedule weekdays = of("{'id':'w','pipeline':'p','owner':'acme','cron':'0 7 * * MON-FRI','timeZone':'UTC'}");
    // 2026-11-27 is a Friday: the next fires are Friday and Monday
    assertEquals(List.of("2026-11-27T07:00:00Z", "2026-11-30T07:00:00Z"), fires(weekdays, "2026-11-27T06:00:00Z", 2));
  }

  @Test
  void every_is_aligned_to_the_epoch_so_every_node_computes_the_same_fires_and_until_ends_them() {
    Schedule s = of("{'id':'e','pipeline':'p','owner':'acme','every':'30s','until':'2026-01-01T00:01:00Z'}");
    assertEquals(List.of("2026-01-01T00:00:30Z", "2026-01-01T00:01:00Z"), fires(s, "2026-01-01T00:00:12Z", 5));
    Schedule seconds = of("{'id':'s','pipeline':'p','owner':'acme','cron':'*/20 * * * * *'}");
    assertEquals(List.of("2026-01-01T00:00:20Z", "2026-01-01T00:00:40Z"), fires(seconds, "2026-01-01T00:00:05Z", 2));
  }

  @Test
  void jitter_is_fixed_per_fire_and_within_its_bound() {
    Schedule s = of("{'id':'j','pipeline':'p','owner':'acme','every':'1m','jitter':'10s'}");
    for (long f : s.next(0, 50)) {
      long j = s.jitterOf(f);
      assertTrue(j >= 0 && j < 10_000, "jitter " + j);
      assertEquals(j, s.jitterOf(f));
    }
  }

  @Test
  void bad_definitions_are_refused_naming_the_field() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a\\u0000',"
        + "'every':'1m'}")).getMessage().startsWith("owner: contains the control character U+0000"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x\\ud800','pipeline':'p','owner':'a',"
        + "'every':'1m'}")).getMessage().startsWith("id: contains the unpaired surrogate U+D800"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a',"
        + "'cron':'0 7 * *'}")).getMessage().startsWith("cron: 0 7 * * is not a cron expression"));
    assertEquals("cron: give cron (e.g. \"0 7 * * MON-FRI\") or every (e.g. \"30s\"), not both",
        assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a'}")).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a',"
        + "'every':'1m','overlpa':'skip'}")).getMessage().startsWith("unknown field 'overlpa'"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a',"
        + "'every':'1m','overlap':'sometimes'}")).getMessage().startsWith("overlap: expected one of skip, allow"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a',"
        + "'cron':'0 7 * * *','timeZone':'Mars/Olympus'}")).getMessage().startsWith("timeZone:"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> of("{'id':'x','pipeline':'p','owner':'a',"
        + "'every':'100ms'}")).getMessage().startsWith("every: at least 1s"));
  }
}
