-- archive-retry: an operator puts a quarantined transaction back to be archived: it leaves quarantineH and
-- exceptionZ and is due in toArchiveZ at once (if the database refuses it again, it is quarantined again).
-- KEYS[1] toArchiveZ   KEYS[2] exceptionZ   KEYS[3] quarantineH   KEYS[4] eventsL   KEYS[5] stateH:<txId>
-- ARGV[1] txId   ARGV[2] now (ms)   ARGV[3] who asked (an API key id or "cli")
-- Replies: {'OK'} (due again), {'NOT_FOUND'} (not quarantined; a quarantined one whose state is gone is
--   forgotten and answers NOT_FOUND too)
-- #include codes
-- #include events

local toArchiveKey, exceptionKey, quarantineKey, eventsKey, stateKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local txId, now, by = ARGV[1], ARGV[2], ARGV[3]

if redis.call('HDEL', quarantineKey, txId) == 0 then
  return {CODE.NOT_FOUND}
end
redis.call('ZREM', exceptionKey, txId)
if redis.call('EXISTS', stateKey) == 0 then
  return {CODE.NOT_FOUND}
end
redis.call('ZADD', toArchiveKey, now, txId)
event_log(eventsKey, 'archive-retried', now, '', txId, {txId = txId, by = by})
return {CODE.OK}
