-- queue (included by the scripts that queue work on a node group): a txId goes on one of the group's
-- lists in its partition, and the group's ring there (qRingL:<group>, at most one token) is rung: a token
-- is pushed, which an idle node blocked on it (BLPOP, with one partition) takes and wakes, and the ring's
-- name is published on as a channel, which idle nodes subscribe to (with several partitions, where one
-- connection cannot block on many slots). Work taken back from a node goes to the front (front = true).
-- A ring that holds a token already publishes nothing: nodes know work waits there; force publishes
-- anyway (a node took all it asked for and left work: wake another one).
local function queue_ring(ringKey, force)
  if redis.call('LLEN', ringKey) == 0 then
    redis.call('RPUSH', ringKey, '1')
    publish(ringKey, '1')
  elseif force then
    publish(ringKey, '1')
  end
end

local function queue_push(queueKey, ringKey, id, front)
  redis.call(front and 'LPUSH' or 'RPUSH', queueKey, id)
  queue_ring(ringKey)
end

-- New work goes on the group's in-queue, a sorted set (qInZ:<group>) scored by when it was queued less its
-- priority's head start (boost: the transaction's qBoost, ms = priority x transactions.priorityAging / 9), so
-- higher priority goes first but never ahead of work that has waited longer than its head start: that is the
-- aging bound. Work taken back from a node (front) scores 0, ahead of everything. seq (optional) keeps the
-- order of one batch queued in the same millisecond: 0.0005 ms apart (a score near 2e12 ms is exact to 0.00025).
local function queue_push_in(queueKey, ringKey, id, now, boost, front, seq)
  -- formatted here: Lua would pass the number with 14 digits, which drops the fraction
  local score = front and 0 or (tonumber(now) - (tonumber(boost) or 0) + (seq or 0) * 0.0005)
  redis.call('ZADD', queueKey, string.format('%.4f', score), id)
  queue_ring(ringKey)
end

-- Fair share across owners (start.lua admits, dequeue.lua and cancel.lua release). At most cap of one
-- owner's starts (transactions.ownerShare x its weight) sit in a group's in-queue at once, counted in
-- qFairH:<group> field <owner>, and marked share = 'in' on their stateH; the rest wait in the owner's own
-- queue qOwnerZ:<group>:<owner> (scored as the in-queue is, so priority holds within the owner; counted in
-- field '*'), marked share = 'wait'. Each admitted start that leaves the in-queue lets the owner's next one in,
-- scored as queued now: an owner with a backlog re-enters behind whoever queued meanwhile, so owners with
-- work take turns, each in proportion to its cap. cap 0: no fair share, straight onto the in-queue.
local function queue_admit(fairKey, ownerKey, queueKey, ringKey, stateKey, id, owner, cap, now, boost, seq)
  if cap > 0 and tonumber(redis.call('HGET', fairKey, owner) or '0') >= cap then
    local score = tonumber(now) - (tonumber(boost) or 0) + (seq or 0) * 0.0005
    redis.call('ZADD', ownerKey, string.format('%.4f', score), id)
    redis.call('HINCRBY', fairKey, '*', 1)
    redis.call('HSET', stateKey, 'share', 'wait')
    return
  end
  if cap > 0 then
    redis.call('HINCRBY', fairKey, owner, 1)
    redis.call('HSET', stateKey, 'share', 'in')
  end
  queue_push_in(queueKey, ringKey, id, now, boost, false, seq)
end

-- An admitted start of owner left the in-queue (taken, or cancelled): the owner's next waiting one that is
-- still queued takes its place, scored as queued now (no ring: the caller decides about waking nodes).
-- Entries of transactions that stopped waiting (cancelled) are dropped on the way, at most 100 per call.
-- Answers whether one was let in.
local function queue_release(fairKey, ownerKey, queueKey, statePrefix, owner, now)
  if redis.call('HINCRBY', fairKey, owner, -1) <= 0 then
    redis.call('HDEL', fairKey, owner)
  end
  for _ = 1, 100 do
    local head = redis.call('ZPOPMIN', ownerKey)
    if #head == 0 then
      return false
    end
    redis.call('HINCRBY', fairKey, '*', -1)
    local key = statePrefix .. head[1]
    local st = redis.call('HMGET', key, 'processingState', 'qBoost', 'share')
    if st[1] == 'queued' and st[3] == 'wait' then
      redis.call('HINCRBY', fairKey, owner, 1)
      redis.call('HSET', key, 'share', 'in')
      redis.call('ZADD', queueKey, string.format('%.4f', tonumber(now) - (tonumber(st[2]) or 0)), head[1])
      return true
    end
  end
  return false
end
