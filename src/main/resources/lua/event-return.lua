-- event-return: takes an event back from a waiter whose transaction had ended when the sender came to wake it
-- (cancelled while it waited, say), and gives it to the next waiter of the key, or keeps it for the retention
-- as if nobody had waited. Called by the sender after set-switch answered ALREADY_FINAL or NOT_FOUND.
-- KEYS[1] eventH   KEYS[2] eventsZ   KEYS[3] eventKeptZ   KEYS[4] eventWaitersZ   (lib/await.lua)
-- ARGV[1] event id   ARGV[2] the waiter (<txId>:<step>) to take it from   ARGV[3] now (ms)
-- ARGV[4] events.retention (ms)
-- Replies:
--   {'OK'}                  others it was delivered to ('all') still hold it: only this delivery is undone
--   {'DELIVERED', waiter}   it had no other: given to this next waiter instead; the caller wakes it (and may
--                           take it back again)
--   {'KEPT'}                it had no other and nobody else waits: kept, first in line, for the next wait
--   {'NOT_FOUND'}           the waiter holds no delivery of this event it has not read: its step read it
--                           (it ran, and may have ended, since), or it was taken back before, or trimmed
-- #include codes
-- #include await

local eventKey, eventsKey, keptKey, waitersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, waiter, now, retention = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])

local given = redis.call('HGET', eventKey, 'd:' .. waiter)
local raw = redis.call('HGET', eventKey, 'e:' .. id)
local d = given and cjson.decode(given)
if not d or not raw or d.id ~= id or d.taken then
  return {CODE.NOT_FOUND}
end
redis.call('HDEL', eventKey, 'd:' .. waiter)
redis.call('ZREM', eventsKey, 'd:' .. waiter)
local e = cjson.decode(raw)
local others = {}
for _, w in ipairs(e.waiters or {}) do
  if w ~= waiter then
    others[#others + 1] = w
  end
end
-- the others it went to ('all') still have it: nothing more; else the next waiter, or kept
local reply = {CODE.OK}
if #others == 0 then
  reply = {CODE.KEPT}
  for _, w in ipairs(redis.call('ZRANGE', waitersKey, 0, -1)) do
    local deadline = tonumber(redis.call('HGET', eventKey, 'w:' .. w) or '0')
    if deadline + 60000 < now then
      redis.call('ZREM', waitersKey, w)
      redis.call('HDEL', eventKey, 'w:' .. w)
    else
      await_deliver(eventKey, eventsKey, waitersKey, w, id, e.payload, now, false)
      others[1] = w
      reply = {CODE.DELIVERED, w}
      break
    end
  end
  if #others == 0 then
    e.outcome = 'kept'
    redis.call('ZADD', keptKey, e.at, id)
    await_keep(keptKey, retention)
  end
end
e.waiters = others
redis.call('HSET', eventKey, 'e:' .. id, cjson.encode(e))
return reply
