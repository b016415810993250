-- reap: take over the work of dead nodes in one partition, and clear what no live node owns there. Which
-- nodes are dead, and which live, judge.lua has said (a node is dead when its heartbeat key has expired).
-- KEYS[1] processingZ   KEYS[2] eventsL   KEYS[3] exceptionZ   (of the partition)
-- ARGV[1] now (ms)   ARGV[2] age (ms) past which a processingZ entry is checked for a live owner
-- ARGV[3] the stateH key prefix   ARGV[4] the inflightZ key prefix
-- ARGV[5], ARGV[6] the qInZ and qRingL key prefixes
--   (all of the partition, from Keys): the transactions are known only once each dead node's inflightZ is
--   read, and their groups only once each state is read, so those keys are built from these parts
-- ARGV[7] '1' in the partition that logs every death (partition 0), '0' in the others (they log a death
--   only where the node held work)
-- ARGV[8] n, the number of dead nodes   ARGV[9 .. 8 + n] the dead nodes   ARGV[9 + n ..] the live nodes
-- Replies: a flat list nodeId, recovered count, ... for each dead node, then 'garbage', n (entries of
-- processingZ with no live owner that were put back, cleared or set aside in exceptionZ)
-- Each transaction of a dead node's inflightZ that still runs there goes back to the front of its group's
-- qInZ as queued with its attempt raised (so the dead node's late writes are refused), marked takenOver at
-- its step (the step may have run: a step declared not idempotent then ends maybe-ran, queue/MaybeRan), and
-- leaves processingZ; the inflightZ is deleted, and eventsL gets a node-dead event (see ARGV[7]; a second reap of
-- the same node finds no inflightZ and logs nothing). Leases are left alone: a lease is shorter than a
-- heartbeat's TTL, so a dead holder's has run out already, and one still renewed belongs to a node that is
-- alive after all (its heartbeat merely lapsed); freeing it would make two leaders.
-- Then the 100 oldest processingZ entries past the age are checked: one whose node is not live is put
-- back on its queue (attempt raised) if it is still processing, dropped from processingZ if it is not, and
-- set aside in exceptionZ (with an exception event saying why) if it has no state at all. Nothing is
-- deleted.
-- #include publish
-- #include queue
-- #include events

local processingKey, eventsKey, exceptionKey = KEYS[1], KEYS[2], KEYS[3]
local now, age = ARGV[1], tonumber(ARGV[2])
local statePrefix, inflightPrefix, inPrefix, ringPrefix = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local logsAll = ARGV[7] == '1'
local dead = tonumber(ARGV[8])
local liveCount = #ARGV - 8 - dead
-- the i-th dead node, and the i-th live one
local function dead_node(i) return ARGV[8 + i] end
local function live_node(i) return ARGV[8 + dead + i] end

local live = {}
for i = 1, liveCount do
  live[live_node(i)] = true
end
local out = {}

local function requeue(key, id, group)
  queue_slot_free(key) -- a capped pipeline's slot held by the dead node's run frees
  redis.call('HINCRBY', key, 'attempt', 1)
  redis.call('HSET', key, 'processingState', 'queued', 'updated', now, 'takenOver',
    redis.call('HGET', key, 'step') or '0')
  queue_push_in(inPrefix .. group, ringPrefix .. group, id, 0, 0, true)
end

local function takeOver(node)
  local inflight = inflightPrefix .. node
  if redis.call('EXISTS', inflight) == 0 then
    if logsAll then
      event_log(eventsKey, 'node-dead', now, node, node, {nodeId = node, reason = 'heartbeat expired', recovered = 0})
    end
    out[#out + 1] = node
    out[#out + 1] = 0
    return
  end
  local recovered = 0
  for _, id in ipairs(redis.call('ZRANGE', inflight, 0, -1)) do
    local key = statePrefix .. id
    local s = redis.call('HMGET', key, 'processingState', 'node', 'group')
    redis.call('ZREM', processingKey, id)
    if s[1] == 'processing' and s[2] == node and s[3] then
      requeue(key, id, s[3])
      recovered = recovered + 1
    end
  end
  redis.call('DEL', inflight)
  event_log(eventsKey, 'node-dead', now, node, node, {nodeId = node, reason = 'heartbeat expired',
    recovered = recovered})
  out[#out + 1] = node
  out[#out + 1] = recovered
end

for i = 1, dead do
  takeOver(dead_node(i))
end

local garbage = 0
local old = redis.call('ZRANGEBYSCORE', processingKey, '-inf', tonumber(now) - age, 'LIMIT', 0, 100)
for _, id in ipairs(old) do
  local key = statePrefix .. id
  local s = redis.call('HMGET', key, 'processingState', 'node', 'group')
  if not s[1] then
    redis.call('ZREM', processingKey, id)
    redis.call('ZADD', exceptionKey, now, id)
    event_log(eventsKey, 'exception', now, '', id, {txId = id, reason = 'in processingZ without a state'})
    garbage = garbage + 1
  elseif s[1] ~= 'processing' then
    redis.call('ZREM', processingKey, id)
    garbage = garbage + 1
  elseif not s[2] or not live[s[2]] then
    redis.call('ZREM', processingKey, id)
    if s[3] then
      requeue(key, id, s[3])
    else
      redis.call('ZADD', exceptionKey, now, id)
      event_log(eventsKey, 'exception', now, '', id, {txId = id, reason = 'processing without a group'})
    end
    garbage = garbage + 1
  end
end
out[#out + 1] = 'garbage'
out[#out + 1] = garbage
return out
