-- await (included by event-send.lua and event-wait.lua): the keys of one business event key (owner, name,
-- key), all in the partition its hash tag names (docs/redis-keys.md):
--   eventH        e:<id> → the event {id, payload, deliver, at, outcome, waiters}; d:<waiter> → what a
--                 waiter was given {id, payload, at, taken} (payload: its JSON text; taken once the step read it); w:<waiter> → its deadline
--                 (ms); seq → how many began to wait so far
--   eventsZ       the e: and d: fields of eventH by when they were written: trimmed after the retention
--   eventKeptZ    the ids of events kept for a waiter to come (none was waiting), oldest first
--   eventWaitersZ the waiters (<txId>:<step>) in the order they began to wait (eventH's seq counts them),
--                 first come first served
-- A waiter's d: entry is kept for the retention, so a step that runs again (after its node died, or woken
-- by the switch that followed its delivery) finds what it was given and never takes a second event.

-- Drops what is older than the retention, at most 100 entries a call (the rest in the next call).
local function await_trim(eventKey, eventsKey, keptKey, now, retention)
  local old = redis.call('ZRANGEBYSCORE', eventsKey, '-inf', now - retention, 'LIMIT', 0, 100)
  for _, field in ipairs(old) do
    redis.call('HDEL', eventKey, field)
    redis.call('ZREM', eventsKey, field)
    if string.sub(field, 1, 2) == 'e:' then
      redis.call('ZREM', keptKey, string.sub(field, 3))
    end
  end
end

-- Keeps a key at least ms longer (never shortens its time to live).
local function await_keep(key, ms)
  local ttl = redis.call('PTTL', key)
  if ttl >= 0 and ttl < ms then
    redis.call('PEXPIRE', key, ms)
  elseif ttl == -1 then
    redis.call('PEXPIRE', key, ms)
  end
end

-- Gives an event to a waiter: its delivery recorded (d:<waiter>), its waiting ended. taken: the step has
-- read it (event-wait), so it can no longer be taken back (event-return).
local function await_deliver(eventKey, eventsKey, waitersKey, waiter, id, payload, now, taken)
  redis.call('HSET', eventKey, 'd:' .. waiter, cjson.encode({id = id, payload = payload, at = now, taken = taken}))
  redis.call('ZADD', eventsKey, now, 'd:' .. waiter)
  redis.call('ZREM', waitersKey, waiter)
  redis.call('HDEL', eventKey, 'w:' .. waiter)
end
