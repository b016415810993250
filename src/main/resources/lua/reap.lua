-- reap: take over the work of dead nodes. A node is dead when its heartbeat key has expired (by Redis's
-- own expiry): Redis is the one judge of liveness. A Hazelcast member-left event only makes the reaper
-- look sooner; it is never a verdict.
-- KEYS[1] nodesZ   KEYS[2] processingZ   KEYS[3] eventsL   KEYS[4] exceptionZ
-- ARGV[1] now (ms)   ARGV[2] age (ms) past which a processingZ entry is checked for a live owner
-- ARGV[3] the stateH key prefix   ARGV[4] the inflightZ key prefix
-- ARGV[5], ARGV[6] what comes before and after the nodeId in a heartbeat key
-- ARGV[7], ARGV[8] the qInL and qRingL key prefixes
--   (all from Keys): the nodes are known only once nodesZ is read, and their transactions and groups only
--   once each node's inflightZ and each state is read, so those keys are built from these parts
-- ARGV[9] '1' to judge heartbeats, '0' to judge nobody: the caller grants a grace period (Redis has just
--   come back after an outage longer than a heartbeat's TTL, and the live nodes have not beaten yet)
-- Replies: a flat list nodeId, recovered count, ... for each node taken over, then 'garbage', n (entries of
-- processingZ with no live owner that were put back, cleared or set aside in exceptionZ)
-- Each transaction of the node's inflightZ that still runs there goes back to the front of its group's
-- qInL as queued with its attempt raised (so the dead node's late writes are refused), leaves
-- processingZ; the node leaves nodesZ (so its next heartbeat is answered FENCED), its inflightZ is
-- deleted, and eventsL gets a node-dead event. Its leases are left alone: a lease is shorter than a
-- heartbeat's TTL, so a dead holder's has run out already, and one still renewed belongs to a node that is
-- alive after all (its heartbeat merely lapsed); freeing it would make two leaders.
-- Then the 100 oldest processingZ entries past the age are checked: one whose node is not registered is
-- put back on its queue (attempt raised) if it is still processing, dropped from processingZ if it is not,
-- and set aside in exceptionZ (with an exception event saying why) if it has no state at all. Nothing is
-- deleted.
-- #include queue
-- #include events

local now = ARGV[1]
local statePrefix, inflightPrefix, beatBefore, beatAfter = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local inPrefix, ringPrefix = ARGV[7], ARGV[8]
local judge = ARGV[9] == '1'
local out = {}

local function requeue(key, id, group)
  redis.call('HINCRBY', key, 'attempt', 1)
  redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
  queue_push(inPrefix .. group, ringPrefix .. group, id, true)
end

local function takeOver(node)
  local inflight = inflightPrefix .. node
  local recovered = 0
  for _, id in ipairs(redis.call('ZRANGE', inflight, 0, -1)) do
    local key = statePrefix .. id
    local s = redis.call('HMGET', key, 'processingState', 'node', 'group')
    redis.call('ZREM', KEYS[2], id)
    if s[1] == 'processing' and s[2] == node and s[3] then
      requeue(key, id, s[3])
      recovered = recovered + 1
    end
  end
  redis.call('DEL', inflight)
  redis.call('ZREM', KEYS[1], node)
  event_log(KEYS[3], 'node-dead', now, {nodeId = node, reason = 'heartbeat expired', recovered = recovered})
  out[#out + 1] = node
  out[#out + 1] = recovered
end

if judge then
  for _, node in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if redis.call('EXISTS', beatBefore .. node .. beatAfter) == 0 then
      takeOver(node)
    end
  end
end

local garbage = 0
local old = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', tonumber(now) - tonumber(ARGV[2]), 'LIMIT', 0, 100)
for _, id in ipairs(old) do
  local key = statePrefix .. id
  local s = redis.call('HMGET', key, 'processingState', 'node', 'group')
  if not s[1] then
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZADD', KEYS[4], now, id)
    event_log(KEYS[3], 'exception', now, {txId = id, reason = 'in processingZ without a state'})
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
      event_log(KEYS[3], 'exception', now, {txId = id, reason = 'processing without a group'})
    end
    garbage = garbage + 1
  end
end
out[#out + 1] = 'garbage'
out[#out + 1] = garbage
return out
