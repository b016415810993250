-- events (included by the scripts that log operational events): one event on eventsL as JSON
-- {type, time (ms), details}, newest first, capped at 1000. docs/redis-keys.md lists the types.
local function event_log(eventsKey, type, now, details)
  redis.call('LPUSH', eventsKey, cjson.encode({type = type, time = tonumber(now), details = details}))
  redis.call('LTRIM', eventsKey, 0, 999)
end
