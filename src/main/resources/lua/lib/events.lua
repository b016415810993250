-- events (included by the scripts that log operational events): one event on eventsL as JSON
-- {time (ms), kind, node, subject, details}, newest first, capped at 1000 per partition (the reaper leader also
-- drops those older than events.maxAge). node is the node the event concerns or that acted ('' when none),
-- subject what it is about (a txId, a nodeId, a URL, a schedule id). docs/redis-keys.md lists the kinds.
local function event_log(eventsKey, kind, now, node, subject, details)
  redis.call('LPUSH', eventsKey, cjson.encode({time = tonumber(now), kind = kind, node = node or '',
    subject = subject or '', details = details}))
  redis.call('LTRIM', eventsKey, 0, 999)
end
