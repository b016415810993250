-- schedule (included by schedule-put and schedule-fire): a schedule's next fire, kept in two places that must
-- agree: its score in schedulesZ (the fire time plus its jitter) and the field nextFire of its scheduleH.
-- next '' takes it off schedulesZ: paused, or no fire is left.
local function schedule_place(schedulesKey, key, id, next, score)
  if next == '' then
    redis.call('ZREM', schedulesKey, id)
    redis.call('HDEL', key, 'nextFire')
  else
    redis.call('ZADD', schedulesKey, score, id)
    redis.call('HSET', key, 'nextFire', next)
  end
end
