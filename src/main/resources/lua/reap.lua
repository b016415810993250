-- reap: take over the work of dead nodes. A node is dead when its heartbeat key has expired, or when the
-- caller names it (Hazelcast saw it leave: fencing by attempt makes an early takeover safe).
-- KEYS[1] nodesZ   KEYS[2] processingZ   KEYS[3] eventsL   KEYS[4] exceptionZ
-- ARGV[1] now (ms)   ARGV[2] key prefix: each node's heartbeat and inflightZ keys and each transaction's
--   stateH, qInL and qRingL keys are built from it, since they are known only once nodesZ is read
-- ARGV[3] age (ms) past which a processingZ entry is checked for a live owner
-- ARGV[4..] nodeIds to take over even if their heartbeat is still there
-- Replies: a flat list nodeId, recovered count, ... for each node taken over, then 'garbage', n (entries of
-- processingZ with no live owner that were put back, cleared or set aside in exceptionZ)
-- Each transaction of the node's inflightZ that still runs there goes back to the front of its group's
-- qInL as queued with its attempt raised (so the dead node's late writes are refused), leaves
-- processingZ; the node leaves nodesZ, its inflightZ is deleted, and eventsL gets one event (capped at
-- 1000 entries).
-- Then the 100 oldest processingZ entries past the age are checked: one whose node is not registered is
-- put back on its queue (attempt raised) if it is still processing, dropped from processingZ if it is not,
-- and set aside in exceptionZ (with an event saying why) if it has no state at all. Nothing is deleted.

local now, prefix = ARGV[1], ARGV[2]
local forced = {}
for i = 4, #ARGV do
  forced[ARGV[i]] = true
end
local out = {}

local function event(fields)
  fields.time = tonumber(now)
  redis.call('LPUSH', KEYS[3], cjson.encode(fields))
  redis.call('LTRIM', KEYS[3], 0, 999)
end

local function requeue(key, id, group)
  redis.call('HINCRBY', key, 'attempt', 1)
  redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
  redis.call('LPUSH', prefix .. 'qInL:' .. group, id)
  if redis.call('LLEN', prefix .. 'qRingL:' .. group) == 0 then
    redis.call('RPUSH', prefix .. 'qRingL:' .. group, '1')
  end
end

local function takeOver(node, reason)
  local inflight = prefix .. 'inflightZ:' .. node
  local recovered = 0
  for _, id in ipairs(redis.call('ZRANGE', inflight, 0, -1)) do
    local key = prefix .. 'stateH:' .. id
    local s = redis.call('HMGET', key, 'processingState', 'node', 'group')
    redis.call('ZREM', KEYS[2], id)
    if s[1] == 'processing' and s[2] == node and s[3] then
      requeue(key, id, s[3])
      recovered = recovered + 1
    end
  end
  redis.call('DEL', inflight)
  redis.call('ZREM', KEYS[1], node)
  event({event = 'node-dead', nodeId = node, reason = reason, recovered = recovered})
  out[#out + 1] = node
  out[#out + 1] = recovered
end

for _, node in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if forced[node] then
    takeOver(node, 'left the cluster')
  elseif redis.call('EXISTS', prefix .. 'node:' .. node .. ':heartbeat') == 0 then
    takeOver(node, 'heartbeat expired')
  end
end

local garbage = 0
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', tonumber(now) - tonumber(ARGV[3]), 'LIMIT', 0, 100)
for _, id in ipairs(old) do
  local key = prefix .. 'stateH:' .. id
  local s = redis.call('HMGET', key, 'processingState', 'node', 'group')
  if not s[1] then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZADD', KEYS[4], now, id)
    event({event = 'exception', txId = id, reason = 'in processingZ without a state'})
    garbage = garbage + 1
  elseif s[1] ~= 'processing' then
    redis.call('ZREM', KEYS[2], id)
    garbage = garbage + 1
  elseif not s[2] or not redis.call('ZSCORE', KEYS[1], s[2]) then
    redis.call('ZREM', KEYS[2], id)
    if s[3] then
      requeue(key, id, s[3])
    else
      redis.call('ZADD', KEYS[4], now, id)
      event({event = 'exception', txId = id, reason = 'processing without a group'})
    end
    garbage = garbage + 1
  end
end
out[#out + 1] = 'garbage'
out[#out + 1] = garbage
return out
