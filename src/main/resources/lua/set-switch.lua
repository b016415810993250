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

local s = redis.call('HMGET', KEYS[1], 'owner', 'processingState', 'switches', 'waitingSwitch', 'group')
if not s[1] or s[1] ~= ARGV[2] then
  return {CODE.NOT_FOUND}
end
if s[2] == 'complete' then
  return {CODE.ALREADY_FINAL}
end
local switches = s[3] and cjson.decode(s[3]) or {}
local name = ARGV[3]
local seq = (switches[name] and switches[name].seq or 0) + 1
switches[name] = {value = cjson.decode(ARGV[4]), seq = seq}
redis.call('HSET', KEYS[1], 'switches', cjson.encode(switches), 'updated', ARGV[5])
if s[2] == 'sleeping' and s[4] == name and redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'processingState', 'queued')
  local inPrefix, ringPrefix = ARGV[6], ARGV[7]
  queue_push_in(inPrefix .. s[5], ringPrefix .. s[5], ARGV[1], ARGV[5], redis.call('HGET', KEYS[1], 'qBoost'))
end
return {CODE.SET, seq}
