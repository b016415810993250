-- requeue: put back on its queue every transaction a node holds in inflightZ but is not running
-- (the reply of a dequeue that never reached the node, or what a stopping node could not finish). Its
-- attempt is raised, so a late write of the old attempt is refused.
-- KEYS[1] inflightZ:<nodeId>   KEYS[2] processingZ
-- ARGV[1] now (ms)   ARGV[2], ARGV[3], ARGV[4] the stateH, qInL and qRingL key prefixes (Keys.stateH(""),
--   …): the transactions are known only once the set is read, and their groups only from their state, so
--   those keys are a prefix and a txId or group (as in dequeue)
-- ARGV[5..] the txIds the node is running now
-- Replies: the number of transactions put back on a queue
-- Entries whose state is no longer 'processing' are only removed from the two sets.
-- #include queue

local now, statePrefix, inPrefix, ringPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local running = {}
for i = 5, #ARGV do
  running[ARGV[i]] = true
end
local requeued = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if not running[id] then
    local key = statePrefix .. id
    local s = redis.call('HMGET', key, 'processingState', 'group')
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    if s[1] == 'processing' and s[2] then
      redis.call('HINCRBY', key, 'attempt', 1)
      redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
      queue_push(inPrefix .. s[2], ringPrefix .. s[2], id, true)
      requeued = requeued + 1
    end
  end
end
return requeued
