-- event-wait: a flow/await step begins to wait for an event of one owner, name and business key, or looks
-- whether one came. A delivery already made to this waiter is answered again (a step that runs twice takes
-- one event); else, while waiting, the first kept (unconsumed) event is taken; else the waiter is registered.
-- KEYS[1] eventH   KEYS[2] eventsZ   KEYS[3] eventKeptZ   KEYS[4] eventWaitersZ   (lib/await.lua)
-- ARGV[1] waiter (<txId>:<step>)   ARGV[2] now (ms)   ARGV[3] events.retention (ms)
-- ARGV[4] 'wait' (the step's first run: take or register) or 'end' (it woke: its time is up unless a
--   delivery came, and it stops waiting)   ARGV[5] its deadline (ms; with 'wait')
-- Replies:
--   {'DELIVERED', id, payload JSON}   the event this waiter was given (now or before)
--   {'WAITING'}                       registered: an event sent from now on is delivered to it
--   {'TIMED_OUT'}                     ('end') nothing came: no longer waiting
-- #include codes
-- #include await

local eventKey, eventsKey, keptKey, waitersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local waiter, now, retention, mode = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local deadline = tonumber(ARGV[5] or '0')

await_trim(eventKey, eventsKey, keptKey, now, retention)
local given = redis.call('HGET', eventKey, 'd:' .. waiter)
if given then
  local d = cjson.decode(given)
  if not d.taken then
    d.taken = true
    redis.call('HSET', eventKey, 'd:' .. waiter, cjson.encode(d))
  end
  return {CODE.DELIVERED, d.id, d.payload}
end
if mode == 'end' then
  redis.call('ZREM', waitersKey, waiter)
  redis.call('HDEL', eventKey, 'w:' .. waiter)
  return {CODE.TIMED_OUT}
end
local kept = redis.call('ZRANGE', keptKey, 0, 0)[1]
if kept then
  local e = cjson.decode(redis.call('HGET', eventKey, 'e:' .. kept))
  redis.call('ZREM', keptKey, kept)
  if e.outcome == 'kept' then
    e.outcome = 'delivered'
  end
  redis.call('HSET', eventKey, 'e:' .. kept, cjson.encode(e))
  await_deliver(eventKey, eventsKey, waitersKey, waiter, kept, e.payload, now, true)
  return {CODE.DELIVERED, kept, e.payload}
end
if not redis.call('ZSCORE', waitersKey, waiter) then
  -- a count, not the time: first come first served even within one millisecond
  redis.call('ZADD', waitersKey, redis.call('HINCRBY', eventKey, 'seq', 1), waiter)
end
redis.call('HSET', eventKey, 'w:' .. waiter, deadline)
-- a waiter stays as long as it may wait, plus the retention for its delivery
await_keep(waitersKey, deadline - now + retention)
await_keep(eventKey, deadline - now + retention)
return {CODE.WAITING}
