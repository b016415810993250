-- group-state: pause, drain or resume a node group in one partition, or read its state there.
-- KEYS[1] groupH:<group>   KEYS[2] qRingL:<group>   KEYS[3] processingZ
-- KEYS[4] qAdminL:<group>  KEYS[5] qOutL:<group>    KEYS[6] qInZ:<group>   KEYS[7] qFairH:<group>
-- ARGV[1] action: pause | drain | resume | read   ARGV[2] now (ms)   ARGV[3] who asked (an API key's name)
-- ARGV[4] the stateH key prefix (Keys.stateH(""))   ARGV[5] the group
-- Replies: {state, since, by, inFlight, queued}: state is running, paused or draining (after the action);
--   inFlight counts the group's transactions processing on a node in this partition, queued those waiting
--   on its three queues and in its owners' own queues (fair share: qFairH field '*').
-- A paused or draining group takes no work: dequeue.lua answers nothing and drops the ring's token, so idle
-- nodes block instead of spinning; what is queued stays queued. Resume rings the group (published too), so
-- every idle node of it comes back at once. Pause and drain are one state to dequeue; drain tells the
-- operator to wait for inFlight to reach 0 (the API answers drained then).
-- #include publish
-- #include queue

local action, now = ARGV[1], ARGV[2]
if action == 'pause' or action == 'drain' then
  redis.call('HSET', KEYS[1], 'state', action == 'pause' and 'paused' or 'draining', 'since', now, 'by', ARGV[3])
elseif action == 'resume' then
  redis.call('DEL', KEYS[1])
  if redis.call('LLEN', KEYS[4]) + redis.call('LLEN', KEYS[5]) + redis.call('ZCARD', KEYS[6]) > 0 then
    queue_ring(KEYS[2], true)
  end
elseif action ~= 'read' then
  return redis.error_reply('ERR group-state: unknown action ' .. tostring(action))
end
local g = redis.call('HMGET', KEYS[1], 'state', 'since', 'by')
local inFlight = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  if redis.call('HGET', ARGV[4] .. id, 'group') == ARGV[5] then
    inFlight = inFlight + 1
  end
end
local queued = redis.call('LLEN', KEYS[4]) + redis.call('LLEN', KEYS[5]) + redis.call('ZCARD', KEYS[6])
  + tonumber(redis.call('HGET', KEYS[7], '*') or '0')
return {g[1] or 'running', g[2] or '', g[3] or '', inFlight, queued}
