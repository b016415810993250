-- group-state: pause, drain or resume a node group in one partition, or read its state there.
-- KEYS[1] groupH:<group>   KEYS[2] qRingL:<group>   KEYS[3] processingZ
-- KEYS[4] qAdminL:<group>  KEYS[5] qOutL:<group>    KEYS[6] qInZ:<group>   KEYS[7] qFairH:<group>
-- ARGV[1] action: pause | drain | resume | read   ARGV[2] now (ms)   ARGV[3] who asked (an API key's name)
-- ARGV[4] the stateH key prefix (Keys.stateH("")): the runs of processingZ are known only once it is read
-- ARGV[5] the group
-- Replies: {state, since, by, inFlight, queued}: state is running, paused or draining (after the action);
--   inFlight counts the group's transactions processing on a node in this partition, queued those waiting
--   on its three queues and in its owners' own queues (fair share: qFairH field '*').
-- A paused or draining group takes no work: dequeue.lua answers nothing and drops the ring's token, so idle
-- nodes block instead of spinning; what is queued stays queued. Resume rings the group (published too), so
-- every idle node of it comes back at once. Pause and drain are one state to dequeue; drain tells the
-- operator to wait for inFlight to reach 0 (the API answers drained then).
-- #include publish
-- #include queue

local groupKey, ringKey, processingKey, adminKey, outKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local inKey, fairKey = KEYS[6], KEYS[7]
local action, now, by, statePrefix, group = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

if action == 'pause' or action == 'drain' then
  redis.call('HSET', groupKey, 'state', action == 'pause' and 'paused' or 'draining', 'since', now, 'by', by)
elseif action == 'resume' then
  redis.call('DEL', groupKey)
  if redis.call('LLEN', adminKey) + redis.call('LLEN', outKey) + redis.call('ZCARD', inKey) > 0 then
    queue_ring(ringKey, true)
  end
elseif action ~= 'read' then
  return redis.error_reply('ERR group-state: unknown action ' .. tostring(action))
end
local g = redis.call('HMGET', groupKey, 'state', 'since', 'by')
local inFlight = 0
for _, id in ipairs(redis.call('ZRANGE', processingKey, 0, -1)) do
  if redis.call('HGET', statePrefix .. id, 'group') == group then
    inFlight = inFlight + 1
  end
end
local queued = redis.call('LLEN', adminKey) + redis.call('LLEN', outKey) + redis.call('ZCARD', inKey)
  + tonumber(redis.call('HGET', fairKey, '*') or '0')
return {g[1] or 'running', g[2] or '', g[3] or '', inFlight, queued}
