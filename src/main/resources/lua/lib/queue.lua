-- queue (included by the scripts that queue work on a node group): a txId goes on one of the group's
-- lists in its partition, and the group's ring there (qRingL:<group>, at most one token) is rung: a token
-- is pushed, which an idle node blocked on it (BLPOP, with one partition) takes and wakes, and the ring's
-- name is published on as a channel, which idle nodes subscribe to (with several partitions, where one
-- connection cannot block on many slots). Work taken back from a node goes to the front (front = true).
-- A ring that holds a token already publishes nothing: nodes know work waits there; force publishes
-- anyway (a node took all it asked for and left work: wake another one).
-- Runs cmd on key with the items of list as its arguments, 1000 at a time (an even number: score, member pairs
-- stay together), so a long list never passes Lua's limit on unpack.
local function queue_chunked(cmd, key, list)
  for from = 1, #list, 1000 do
    redis.call(cmd, key, unpack(list, from, math.min(from + 999, #list)))
  end
end

-- The in-queue score of work queued at now with a head start of boost ms (see queue_push_in), as text: Lua
-- would pass the number with 14 digits, which drops the fraction. seq (optional) keeps a batch's order.
local function queue_in_score(now, boost, seq)
  return string.format('%.4f', tonumber(now) - (tonumber(boost) or 0) + (seq or 0) * 0.0005)
end

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
  redis.call('ZADD', queueKey, front and '0' or queue_in_score(now, boost, seq), id)
  queue_ring(ringKey)
end

-- Fair share across owners (start.lua admits, dequeue.lua and cancel.lua release). At most cap of one
-- owner's starts (transactions.ownerShare x its weight) sit in a group's in-queue at once, counted in
-- qFairH:<group> field <owner>, and marked share = 'in' on their stateH; the rest wait in the owner's own
-- queue qOwnerZ:<group>:<owner> (scored as the in-queue is, so priority holds within the owner; counted in
-- field '*'), marked share = 'wait'. Each admitted start that leaves the in-queue lets the owner's next one in,
-- scored as queued now: an owner with a backlog re-enters behind whoever queued meanwhile, so owners with
-- work take turns, each in proportion to its cap. cap 0: no fair share, straight onto the in-queue.
-- One script call counts each owner once (queue_fair caches the count; queue_fair_flush writes it).
local queue_fair = {}

-- Where a start goes: 'in' (admitted) or 'wait', with its owner's entry to hand to queue_wait; nil when off.
-- cap is the owner's share from the node's config (transactions.ownerShare x ownerWeights); a weight set
-- through the admin API (field weight of limitsKey, the owner's ownerH copy in this partition) replaces the
-- configured one: the share is then base (transactions.ownerShare) x that weight.
local function queue_share(fairKey, ownerKey, owner, cap, base, limitsKey)
  if cap <= 0 then
    return nil
  end
  local name = fairKey .. '|' .. owner
  local f = queue_fair[name]
  if not f then
    f = {fairKey = fairKey, ownerKey = ownerKey, owner = owner, added = 0, waiting = {},
      admitted = tonumber(redis.call('HGET', fairKey, owner) or '0'), cap = cap}
    local weight = limitsKey and tonumber(redis.call('HGET', limitsKey, 'weight') or '')
    if weight and base and base > 0 then
      f.cap = math.max(1, math.floor(base * weight))
    end
    queue_fair[name] = f
  end
  if f.admitted + f.added >= f.cap then
    return 'wait', f
  end
  f.added = f.added + 1
  return 'in', f
end

-- A start beyond its owner's share waits in the owner's queue (written by queue_fair_flush).
local function queue_wait(f, id, now, boost, seq)
  local w = f.waiting
  w[#w + 1] = queue_in_score(now, boost, seq)
  w[#w + 1] = id
end

local function queue_fair_flush()
  for _, f in pairs(queue_fair) do
    if f.added > 0 then
      redis.call('HINCRBY', f.fairKey, f.owner, f.added)
    end
    local w = f.waiting
    queue_chunked('ZADD', f.ownerKey, w)
    if #w > 0 then
      redis.call('HINCRBY', f.fairKey, '*', #w / 2)
    end
  end
  queue_fair = {}
end

-- Admitted starts of owners left the in-queue (released: their owners, one entry each, in the order they left):
-- as many of each owner's waiting ones take their places, scored as queued now (no ring: the caller decides about
-- waking nodes). An entry whose transaction no longer waits is dropped. Answers how many were let in.
-- Queued now means behind the in-queue's tail when that was queued in the same millisecond: a sorted set
-- orders equal scores by member, so two owners' entries moved up in one millisecond (by this call or the
-- one before) would go by txId, not by when they moved up, and the owner whose txIds sort first would win
-- every tie (FairShareTest saw 33 of 40 for a weight that should give 30).
-- The places are filled in the order they were freed: the in-queue then stays one round of turns, each start
-- replaced by its owner's next one round later. Filled owner by owner (a Lua table's order), the same owners'
-- next ones went first in every batch a node took, a few places per round each time: over 12 rounds of batches
-- of 1 to 200, o9 of ten owners took 1,160 of its 1,200 and o1 260 of its 240 (FairShareScriptTest).
local function queue_refill(fairKey, ownerPrefix, queueKey, statePrefix, released, now)
  local tail = tonumber(redis.call('ZRANGE', queueKey, -1, -1, 'WITHSCORES')[2] or '')
  local function score(boost)
    local s = tonumber(now) - (tonumber(boost) or 0)
    if tail and tail >= s and tail < s + 1 then
      s = tail + 0.0005
    end
    if not tail or s > tail then
      tail = s
    end
    return string.format('%.4f', s)
  end
  local counts, owners = {}, {}
  for _, owner in ipairs(released) do
    if not counts[owner] then
      owners[#owners + 1] = owner
    end
    counts[owner] = (counts[owner] or 0) + 1
  end
  -- owner -> its next waiting ones, {txId, qBoost} in its own order
  local ready = {}
  for _, owner in ipairs(owners) do
    local ownerKey = ownerPrefix .. owner
    local need, found, tries = counts[owner], {}, 0
    while need > 0 and tries < 10 do
      tries = tries + 1
      local heads = redis.call('ZPOPMIN', ownerKey, need)
      if #heads == 0 then
        break
      end
      if redis.call('HINCRBY', fairKey, '*', -#heads / 2) <= 0 then
        redis.call('HDEL', fairKey, '*') -- a field goes at 0 (docs/redis-keys.md)
      end
      for j = 1, #heads, 2 do
        local key = statePrefix .. heads[j]
        local st = redis.call('HMGET', key, 'processingState', 'qBoost', 'share')
        if st[1] == 'queued' and st[3] == 'wait' then
          redis.call('HSET', key, 'share', 'in')
          found[#found + 1] = {heads[j], st[2]}
          need = need - 1
        end
      end
    end
    if need > 0 and redis.call('HINCRBY', fairKey, owner, -need) <= 0 then
      redis.call('HDEL', fairKey, owner)
    end
    ready[owner] = found
  end
  local adds, used = {}, {}
  for _, owner in ipairs(released) do
    local k = (used[owner] or 0) + 1
    local one = ready[owner][k]
    if one then
      used[owner] = k
      adds[#adds + 1] = score(one[2])
      adds[#adds + 1] = one[1]
    end
  end
  queue_chunked('ZADD', queueKey, adds)
  return #adds / 2
end

-- One admitted start left the in-queue without being taken (cancelled): its owner's next one takes its place.
local function queue_release(fairKey, ownerKey, queueKey, statePrefix, owner, now)
  local ownerPrefix = string.sub(ownerKey, 1, #ownerKey - #owner)
  return queue_refill(fairKey, ownerPrefix, queueKey, statePrefix, {owner}, now) > 0
end

-- Concurrency caps (dequeue.lua): a run of a pipeline or an owner with maxConcurrency holds a slot, counted in
-- qRunH:<group> field <pipeline> or @<owner>, and noted on its stateH: slot = that qRunH key, slotNames = the
-- limits it holds slots of, slotHeld = the group's
-- qHeldS key, slotRing = its qRingL key (names dequeue had from Keys, kept so that every script that ends a
-- run can free the slot without knowing more). When the run leaves its worker (completes, sleeps, retries,
-- hops, forks, or is taken back from a node), the slot frees; when work of the pipeline is held for a slot,
-- the group's ring wakes a node to take it.
local function queue_slot_free(stateKey)
  local s = redis.call('HMGET', stateKey, 'slot', 'slotHeld', 'slotRing', 'type', 'slotNames')
  if not s[1] or s[1] == '' then
    return
  end
  redis.call('HDEL', stateKey, 'slot', 'slotHeld', 'slotRing', 'slotNames')
  -- slotNames: the limits whose slots the run holds (its pipeline's, '@' and its owner's), space-separated;
  -- a run taken before owner caps held its pipeline's only and has no slotNames
  local ring = false
  for name in string.gmatch(s[5] or s[4], '%S+') do
    if redis.call('HINCRBY', s[1], name, -1) <= 0 then
      redis.call('HDEL', s[1], name)
    end
    ring = ring or redis.call('SISMEMBER', s[2], name) == 1
  end
  if ring then
    queue_ring(s[3], true)
  end
end

-- A run leaves its node while the transaction goes on (it sleeps, retries, hops or forks): out of processingZ and
-- the node's inflightZ, and its slot freed.
local function queue_leave_node(stateKey, processingKey, inflightKey, id)
  redis.call('ZREM', processingKey, id)
  redis.call('ZREM', inflightKey, id)
  queue_slot_free(stateKey)
end
