-- archive-drop: an operator gives up on a quarantined transaction: its state is deleted from Redis (it is never
-- archived) and an archive-dropped event says who did it.
-- KEYS[1] toArchiveZ   KEYS[2] exceptionZ   KEYS[3] quarantineH   KEYS[4] eventsL   KEYS[5] liveZ
-- KEYS[6] stateH:<txId>
-- ARGV[1] txId   ARGV[2] now (ms)   ARGV[3] who asked (an API key id or "cli")
-- Replies: {'OK'} (deleted), {'NOT_FOUND'} (not quarantined: nothing is deleted)
-- #include codes
-- #include events

local toArchiveKey, exceptionKey, quarantineKey, eventsKey, liveKey, stateKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4],
  KEYS[5], KEYS[6]
local txId, now, by = ARGV[1], ARGV[2], ARGV[3]

local reason = redis.call('HGET', quarantineKey, txId)
if not reason then
  return {CODE.NOT_FOUND}
end
redis.call('HDEL', quarantineKey, txId)
redis.call('ZREM', exceptionKey, txId)
redis.call('ZREM', toArchiveKey, txId)
redis.call('ZREM', liveKey, txId)
redis.call('DEL', stateKey)
event_log(eventsKey, 'archive-dropped', now, '', txId, {txId = txId, by = by, message = cjson.decode(reason).message})
return {CODE.OK}
