-- wake: queue the sleepers whose wake time has come, a batch at a time (the reaper leader calls it).
-- KEYS[1] sleepingZ
-- ARGV[1] now (ms)   ARGV[2] most to wake in this call   ARGV[3] key prefix: each one's stateH, qInL and
--   qRingL keys are built from it and its group, known only once sleepingZ is read
-- Replies: the number woken. A member that is not sleeping any more (cancelled, woken by a switch) only
-- leaves sleepingZ.

local prefix = ARGV[3]
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local woken = 0
for _, id in ipairs(due) do
  redis.call('ZREM', KEYS[1], id)
  local key = prefix .. 'stateH:' .. id
  local s = redis.call('HMGET', key, 'processingState', 'group')
  if s[1] == 'sleeping' then
    redis.call('HSET', key, 'processingState', 'queued', 'updated', ARGV[1])
    redis.call('RPUSH', prefix .. 'qInL:' .. s[2], id)
    if redis.call('LLEN', prefix .. 'qRingL:' .. s[2]) == 0 then
      redis.call('RPUSH', prefix .. 'qRingL:' .. s[2], '1')
    end
    woken = woken + 1
  end
end
return woken
