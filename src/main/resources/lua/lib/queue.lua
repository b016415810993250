-- queue (included by the scripts that queue work on a node group): a txId goes on one of the group's
-- lists, and the group's ring (qRingL:<group>, at most one token) is rung, so an idle node blocked on it
-- (BLPOP) wakes and dequeues. Work taken back from a node goes to the front (front = true).
local function queue_ring(ringKey)
  if redis.call('LLEN', ringKey) == 0 then
    redis.call('RPUSH', ringKey, '1')
  end
end

local function queue_push(queueKey, ringKey, id, front)
  redis.call(front and 'LPUSH' or 'RPUSH', queueKey, id)
  queue_ring(ringKey)
end
