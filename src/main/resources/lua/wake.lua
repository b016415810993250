-- wake: queue the sleepers whose wake time has come, a batch at a time (the reaper leader calls it).
-- KEYS[1] sleepingZ   KEYS[2], KEYS[3] (when given) the partition's reaperLock1 and reaperLock2: the caller
--   wakes only if it holds or takes that lease (lib/lease.lua), in the same call, so a partition's reaper
--   costs one call a round
-- ARGV[1] now (ms)   ARGV[2] most to wake in this call
-- ARGV[3], ARGV[4], ARGV[5] the stateH, qInZ and qRingL key prefixes (Keys.stateH(""), …): the sleepers
--   and their groups are known only once sleepingZ is read, so their keys are a prefix and a txId or group
-- ARGV[6], ARGV[7], ARGV[8] (with the lease keys) nodeId, lease (ms), grace (ms)
-- Replies: the number woken, or -1 when lease keys were given and the caller does not lead. A member that
-- is not sleeping any more (cancelled, woken by a switch) only leaves sleepingZ. A scheduled start (see
-- start.lua) whose time has come is queued like a sleeper. A paused one (pause.lua) is not queued: it leaves
-- sleepingZ with the time it fell due kept in pausedWake (resume.lua fires or skips it).
-- #include publish
-- #include queue
-- #include lease

local sleepingKey, lock1, lock2 = KEYS[1], KEYS[2], KEYS[3]
local now, most, statePrefix, inPrefix, ringPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local nodeId, lease, grace = ARGV[6], ARGV[7], ARGV[8]

if lock1 and not lease_hold(lock1, lock2, nodeId, lease, grace, true) then
  return -1
end

local due = redis.call('ZRANGEBYSCORE', sleepingKey, '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(most))
local woken = 0
for j = 1, #due, 2 do
  local id = due[j]
  redis.call('ZREM', sleepingKey, id)
  local key = statePrefix .. id
  local s = redis.call('HMGET', key, 'processingState', 'group', 'qBoost', 'paused')
  if s[4] and (s[1] == 'sleeping' or s[1] == 'scheduled') then
    -- paused (pause.lua): parked off sleepingZ with the time it fell due, for resume.lua to fire or skip
    redis.call('HSET', key, 'pausedWake', due[j + 1])
  elseif s[1] == 'sleeping' or s[1] == 'scheduled' then
    redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
    queue_push_in(inPrefix .. s[2], ringPrefix .. s[2], id, now, s[3])
    woken = woken + 1
  end
end
return woken
