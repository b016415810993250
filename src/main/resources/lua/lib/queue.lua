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
