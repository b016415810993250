-- archive-quarantine: set aside the transactions the archive database refused one by one (a data error, not an
-- outage), so they no longer hold the archive back: each leaves toArchiveZ for exceptionZ, its reason goes to
-- quarantineH beside it, and an archive-quarantined event is logged. Its state stays in Redis (and in liveZ, so
-- reads and search still find it) until an operator retries it (archive-retry) or drops it (archive-drop).
-- KEYS[1] toArchiveZ   KEYS[2] exceptionZ   KEYS[3] quarantineH   KEYS[4] eventsL
-- KEYS[4 + i] stateH:<txId> of the i-th refused transaction
-- ARGV[1] now (ms)   ARGV[2] nodeId (the archive leader)
-- ARGV[3 + 3(i-1)] txId, ARGV[4 + 3(i-1)] the stamp it was handed out with, ARGV[5 + 3(i-1)] reason (JSON:
--   {time, message, sqlState, node})
-- Replies: the number set aside. One that is gone is only forgotten; one whose state changed after it was
-- handed out (its stamp differs) is due again at once instead (its new state may archive).
-- #include events

local toArchiveKey, exceptionKey, quarantineKey, eventsKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, nodeId = ARGV[1], ARGV[2]
local refusedCount = #KEYS - 4
-- refused transaction i: its stateH key, txId, the stamp it was handed out with, the reason
local function refused_of(i)
  return KEYS[4 + i], ARGV[3 + 3 * (i - 1)], ARGV[4 + 3 * (i - 1)], ARGV[5 + 3 * (i - 1)]
end

local function stamp(key)
  local s = redis.call('HMGET', key, 'updated', 'rev')
  return (s[1] or '') .. '/' .. (s[2] or '0')
end

local quarantined = 0
for i = 1, refusedCount do
  local key, id, handed, reason = refused_of(i)
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZREM', toArchiveKey, id)
  elseif stamp(key) ~= handed then
    redis.call('ZADD', toArchiveKey, now, id)
  else
    redis.call('ZREM', toArchiveKey, id)
    redis.call('ZADD', exceptionKey, now, id)
    redis.call('HSET', quarantineKey, id, reason)
    local why = cjson.decode(reason)
    event_log(eventsKey, 'archive-quarantined', now, nodeId, id, {txId = id, message = why.message,
      sqlState = why.sqlState})
    quarantined = quarantined + 1
  end
end
return quarantined
