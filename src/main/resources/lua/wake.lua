-- wake: queue the sleepers whose wake time has come, a batch at a time (the reaper leader calls it).
-- KEYS[1] sleepingZ
-- ARGV[1] now (ms)   ARGV[2] most to wake in this call
-- ARGV[3], ARGV[4], ARGV[5] the stateH, qInL and qRingL key prefixes (Keys.stateH(""), …): the sleepers
--   and their groups are known only once sleepingZ is read, so their keys are a prefix and a txId or group
-- Replies: the number woken. A member that is not sleeping any more (cancelled, woken by a switch) only
-- leaves sleepingZ.
-- #include queue

local statePrefix, inPrefix, ringPrefix = ARGV[3], ARGV[4], ARGV[5]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local woken = 0
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local key = statePrefix .. id
  local s = redis.call('HMGET', key, 'processingState', 'group')
  if s[1] == 'sleeping' then
    redis.call('HSET', key, 'processingState', 'queued', 'updated', ARGV[1])
    queue_push(inPrefix .. s[2], ringPrefix .. s[2], id)
    woken = woken + 1
  end
end
return woken
