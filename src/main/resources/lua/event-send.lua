-- event-send: records an event of one owner, name and business key and matches it in the same call: it is
-- delivered to the first waiter ('one') or every waiter ('all') of the key; with none, it is kept for the
-- retention and the first step to wait for it takes it (and a startOn pipeline, if any, starts a transaction
-- of it: the caller starts it). An id already recorded within the retention records nothing (idempotent sending).
-- KEYS[1] eventH   KEYS[2] eventsZ   KEYS[3] eventKeptZ   KEYS[4] eventWaitersZ   (lib/await.lua)
-- ARGV[1] event id   ARGV[2] payload JSON   ARGV[3] deliver ('one' or 'all')   ARGV[4] now (ms)
-- ARGV[5] events.retention (ms)   ARGV[6] '1' when a pipeline starts on this event (startOn), else ''
-- Replies:
--   {'DELIVERED', waiter...}   given to these waiters (<txId>:<step>); the caller wakes their transactions
--   {'START'}                  no waiter: the caller starts the startOn pipeline (externalId from the id);
--                              the event is kept too, for the started transaction's flow/await to take
--   {'KEPT'}                   no waiter: kept for the first to wait within the retention
--   {'DUPLICATE', outcome, waiter...}   the id was recorded before (outcome delivered, start or kept; the
--                              waiters it was delivered to): nothing written
-- A waiter whose deadline passed more than a minute ago (its transaction ended without looking again, e.g.
-- cancelled) is dropped, not delivered to.
-- #include codes
-- #include await

local eventKey, eventsKey, keptKey, waitersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, payload, deliver, now = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local retention, startOn = tonumber(ARGV[5]), ARGV[6] == '1'

await_trim(eventKey, eventsKey, keptKey, now, retention)
local before = redis.call('HGET', eventKey, 'e:' .. id)
if before then
  local e = cjson.decode(before)
  local reply = {CODE.DUPLICATE, e.outcome}
  for _, w in ipairs(e.waiters or {}) do
    reply[#reply + 1] = w
  end
  return reply
end

local given = {}
local waiters = redis.call('ZRANGE', waitersKey, 0, -1)
for _, w in ipairs(waiters) do
  local deadline = tonumber(redis.call('HGET', eventKey, 'w:' .. w) or '0')
  if deadline + 60000 < now then
    redis.call('ZREM', waitersKey, w)
    redis.call('HDEL', eventKey, 'w:' .. w)
  else
    await_deliver(eventKey, eventsKey, waitersKey, w, id, payload, now, false)
    given[#given + 1] = w
    if deliver == 'one' then
      break
    end
  end
end

local e = {id = id, payload = payload, deliver = deliver, at = now}
local reply
if #given > 0 then
  e.outcome, e.waiters = 'delivered', given
  reply = {CODE.DELIVERED}
  for _, w in ipairs(given) do
    reply[#reply + 1] = w
  end
else
  -- kept either way: a transaction started on it takes it at its flow/await of this name and key
  e.outcome = startOn and 'start' or 'kept'
  redis.call('ZADD', keptKey, now, id)
  await_keep(keptKey, retention)
  reply = {startOn and CODE.START or CODE.KEPT}
end
redis.call('HSET', eventKey, 'e:' .. id, cjson.encode(e))
redis.call('ZADD', eventsKey, now, 'e:' .. id)
await_keep(eventKey, retention)
await_keep(eventsKey, retention)
return reply
