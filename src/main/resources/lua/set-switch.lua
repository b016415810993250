-- set-switch: set a named switch on an owner's transaction; one sleeping on that switch wakes at once.
-- KEYS[1] stateH:<txId>   KEYS[2] sleepingZ
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] switch name   ARGV[4] value (JSON text)   ARGV[5] now (ms)
-- ARGV[6], ARGV[7] the qInZ and qRingL key prefixes (Keys.qInZ(""), …): the queue to wake it onto is its
--   group's, and the group is known only from its state, so those keys are the prefix and the group
-- Replies:
--   {'SET', seq}        set (seq counts the changes of this switch); woken if it slept on it
--   {'ALREADY_FINAL'}   the transaction has ended; nothing written
--   {'NOT_FOUND'}       no such transaction, or another owner's; nothing written
-- #include publish
-- #include codes
-- #include queue

local key, sleepingKey = KEYS[1], KEYS[2]
local txId, owner, name, value, now, inPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local ringPrefix = ARGV[7]
local s = redis.call('HMGET', key, 'owner', 'processingState', 'switches', 'waitingSwitch', 'group')
if not s[1] or s[1] ~= owner then
  return {CODE.NOT_FOUND}
end
if s[2] == 'complete' then
  return {CODE.ALREADY_FINAL}
end
local switches = s[3] and cjson.decode(s[3]) or {}
local seq = (switches[name] and switches[name].seq or 0) + 1
switches[name] = {value = cjson.decode(value), seq = seq}
redis.call('HSET', key, 'switches', cjson.encode(switches), 'updated', now)
if s[2] == 'sleeping' and s[4] == name and redis.call('ZREM', sleepingKey, txId) == 1 then
  redis.call('HSET', key, 'processingState', 'queued')
  queue_push_in(inPrefix .. s[5], ringPrefix .. s[5], txId, now, redis.call('HGET', key, 'qBoost'))
end
return {CODE.SET, seq}
