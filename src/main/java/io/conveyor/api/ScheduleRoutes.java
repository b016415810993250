package io.conveyor.api;

import static io.conveyor.api.HttpIo.body;
import static io.conveyor.api.HttpIo.json;
import static io.conveyor.api.HttpIo.owner;

import io.vertx.ext.web.Router;

/** /api/v1/admin/schedules (admin role): list, read, put, delete, pause, resume and trigger schedules. */
public final class ScheduleRoutes implements RouteGroup {
  private final ScheduleAdmin schedules;

  public ScheduleRoutes(ScheduleAdmin schedules) {
    this.schedules = schedules;
  }

  @Override
  public void mount(Router r) {
    r.get("/api/v1/admin/schedules").handler(ctx -> json(ctx, schedules.list()));
    r.get("/api/v1/admin/schedules/:id").handler(ctx -> json(ctx, schedules.get(ctx.pathParam("id"))));
    r.put("/api/v1/admin/schedules/:id").handler(ctx -> json(ctx, body(ctx).compose(b ->
        schedules.put(ctx.pathParam("id"), b))));
    r.delete("/api/v1/admin/schedules/:id").handler(ctx -> json(ctx, schedules.delete(ctx.pathParam("id"))));
    r.post("/api/v1/admin/schedules/:id/pause").handler(ctx -> json(ctx, schedules.setPaused(ctx.pathParam("id"),
        true, owner(ctx))));
    r.post("/api/v1/admin/schedules/:id/resume").handler(ctx -> json(ctx, schedules.setPaused(ctx.pathParam("id"),
        false, owner(ctx))));
    r.post("/api/v1/admin/schedules/:id/trigger").handler(ctx -> json(ctx, schedules.trigger(ctx.pathParam("id"))));
  }
}
