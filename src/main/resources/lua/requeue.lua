-- requeue: put back on its queue every transaction a node holds in inflightZ but is not running
-- (the reply of a dequeue that never reached the node, or what a stopping node could not finish). Its
-- attempt is raised, so a late write of the old attempt is refused.
-- KEYS[1] inflightZ:<nodeId>   KEYS[2] processingZ
-- ARGV[1] now (ms)   ARGV[2] key prefix: each transaction's stateH, qInL and qRingL keys are built from it
--   and the group in its state, since they are known only once the set is read (as in dequeue)
-- ARGV[3..] the txIds the node is running now
-- Replies: the number of transactions put back on a queue
-- Entries whose state is no longer 'processing' are only removed from the two sets.

local now, prefix = ARGV[1], ARGV[2]
local running = {}
for i = 3, #ARGV do
  running[ARGV[i]] = true
end
local requeued = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if not running[id] then
    local key = prefix .. 'stateH:' .. id
    local s = redis.call('HMGET', key, 'processingState', 'group')
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    if s[1] == 'processing' and s[2] then
      redis.call('HINCRBY', key, 'attempt', 1)
      redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
      redis.call('LPUSH', prefix .. 'qInL:' .. s[2], id)
      if redis.call('LLEN', prefix .. 'qRingL:' .. s[2]) == 0 then
        redis.call('RPUSH', prefix .. 'qRingL:' .. s[2], '1')
      end
      requeued = requeued + 1
    end
  end
end
return requeued
