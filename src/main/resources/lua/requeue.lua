-- requeue: put back on its queue every transaction a node holds in inflightZ but is not running
-- (the reply of a dequeue that never reached the node, or what a stopping node could not finish). Its
-- attempt is raised, so a late write of the old attempt is refused.
-- KEYS[1] inflightZ:<nodeId>   KEYS[2] processingZ
-- ARGV[1] now (ms)   ARGV[2], ARGV[3], ARGV[4] the stateH, qInZ and qRingL key prefixes (Keys.stateH(""),
--   …): the transactions are known only once the set is read, and their groups only from their state, so
--   those keys are a prefix and a txId or group (as in dequeue)
-- ARGV[5] the nodeId   ARGV[6] '1' when the node stops: then everything goes back, the runs listed too, and
--   each listed one is marked takenOver at its step (its step may have been called, as reap.lua marks a dead
--   node's); else '0'   ARGV[7..] the runs the node has under way now, in pairs: txId, the attempt it runs
-- Replies: the number of transactions put back on a queue
-- Entries whose state is no longer 'processing' on this node (another node took it, or it ended) are only
-- removed from the two sets. A run counts as this entry's only at the attempt the state holds: after a takeover
-- the node may hold a transaction again (a later attempt, taken by a dequeue whose reply came while it was
-- fenced) while its old run, refused at its next write, has not ended yet; that later attempt runs nowhere.
-- #include publish
-- #include queue

local inflightKey, processingKey = KEYS[1], KEYS[2]
local now, statePrefix, inPrefix, ringPrefix, node = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local stopping = ARGV[6] == '1'
local runArgs = #ARGV - 6
-- the i-th word of the runs under way (1-based: txId, attempt, txId, attempt, …)
local function runArg(i)
  return ARGV[6 + i]
end

-- txId -> {attempt -> true}, the runs under way here (a transaction may run here at two attempts)
local running = {}
for i = 1, runArgs - 1, 2 do
  local attempts = running[runArg(i)] or {}
  attempts[tonumber(runArg(i + 1))] = true
  running[runArg(i)] = attempts
end
local requeued = 0
for _, id in ipairs(redis.call('ZRANGE', inflightKey, 0, -1)) do
  local key = statePrefix .. id
  local s = redis.call('HMGET', key, 'processingState', 'group', 'node', 'attempt')
  local runs = running[id] and running[id][tonumber(s[4] or '')] or false
  if stopping or not runs then
    redis.call('ZREM', inflightKey, id)
    local mine = s[1] == 'processing' and s[3] == node
    if mine or s[1] ~= 'processing' then
      -- a processingZ entry of a run on another node is that node's
      redis.call('ZREM', processingKey, id)
    end
    if mine and s[2] then
      queue_slot_free(key)
      redis.call('HINCRBY', key, 'attempt', 1)
      redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
      if runs then
        redis.call('HSET', key, 'takenOver', redis.call('HGET', key, 'step') or '0')
      end
      queue_push_in(inPrefix .. s[2], ringPrefix .. s[2], id, 0, 0, true)
      requeued = requeued + 1
    end
  end
end
return requeued
