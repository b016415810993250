-- dequeue: hand up to N queued transactions of one group to a node, admin first, then out, then in.
-- KEYS[1] qAdminL:<group>   KEYS[2] qOutL:<group>   KEYS[3] qInZ:<group>
-- KEYS[4] processingZ       KEYS[5] inflightZ:<nodeId>   KEYS[6] qRingL:<group>
-- KEYS[7..9] stats1H, stats2H, stats3H of the slots that hold now (a first dequeue counts as started)
-- KEYS[10] groupH:<group> (a paused or draining group takes nothing: see group-state.lua)
-- KEYS[11] qFairH:<group> (fair share: an admitted start taken lets its owner's next one in; lib/queue.lua)
-- ARGV[1] max (free worker slots)   ARGV[2] nodeId   ARGV[3] now (ms)
-- ARGV[4] the stateH key prefix (Keys.stateH("")): the popped txIds name their stateH keys, which cannot
--   be known before the pop, so those keys are the prefix and the txId
-- ARGV[5] the group (for the stats)
-- ARGV[6] the group's qOwnerZ key prefix (Keys.qOwnerZ(group, "")): an owner's own queue is known only from
--   the owner of a popped start
-- KEYS[12] qHeldS:<group>   KEYS[13] qRateH:<group>   (rate limits, below)   KEYS[14] qRunH:<group> (caps)
-- ARGV[7] the partition's pipelineH key prefix   ARGV[8] the group's qHeldZ key prefix (Keys.qHeldZ(group, ""))
--   ARGV[9] the number of partitions, ARGV[10] this one's index: a popped transaction's pipeline, and so its
--   limits and held queue, are known only from its state
-- ARGV[11] the partition's ownerH key prefix (Keys.ownerInPartitionH(p, "")): an owner's limits, like a
--   pipeline's, are known only from a popped transaction's state
-- Limits are a pipeline's (pipelineH fields cap and rate) and an owner's (ownerH, set through the admin API),
-- each counted per group under its name: the pipeline's, or '@' and the owner's (neither begins with '@'). A
-- transaction runs only when both have room; it is held under the first that has none.
-- Rate limits: a pipeline with a rate (pipelineH field rate, per second; each partition takes its
-- 1/partitions share) has a token bucket in qRateH:<group> (fields <pipeline>:t tokens, <pipeline>:at when
-- counted), holding at most a tenth of a second's worth (a node that finds no token is told when the next
-- comes, and rings the group then: see the reply). A transaction from the in-queue whose pipeline has no token
-- is held in qHeldZ:<group>:<pipeline> (its score kept; the pipeline named in qHeldS:<group>), off any
-- worker, and a later call takes it, before the in-queue, once tokens have come.
-- Concurrency caps: a pipeline with maxConcurrency (pipelineH field cap; partition i of P takes
-- floor(cap / P), plus 1 when i < cap mod P, so the shares add up to the cap; at least 1) counts its runs in
-- qRunH:<group>. A transaction from any queue whose pipeline has no free slot is held the same way (from the
-- admin and out queues at score 0, ahead); taking it holds a slot, noted on its state for whatever ends the
-- run (lib/queue.lua queue_slot_free, which also rings the group when work waits for the slot).
-- Replies: a list, one entry per transaction taken:
--   {txId, attempt, type, version, step, stepInput, owner, externalId, metadata, created, queue,
--    childStatus, childOutput, childNote, stepRetry, switches, stepAttempt, trace (its traceparent, or '')}
--   and, last, when work is held by a rate limit with no token now, a number instead of an entry: the ms until
--   the first such limit has one (the node rings the group then, rather than waiting for a start or idleWait);
--   where queue is 'admin', 'out' or 'in', and the child fields are set when a child pipeline the
--   transaction waited for has ended (its result stands for the step at 'step'); stepAttempt is the
--   step's attempt under its retry policy (1 unless retry.lua raised it).
-- A txId whose state is not 'queued' (a stale duplicate, or gone) is dropped from the queue. One call pops
-- at most max + 1000 entries, so a queue full of stale entries never holds Redis long; when it stops
-- there with work left, it rings the group so a node comes back at once.
-- Taking is recorded in processingZ and inflightZ:<nodeId> in the same script, so a node that dies
-- before it reads the reply leaves the work where the reaper finds it.
-- When the node took all it asked for and work remains, the ring is rung (and published on) so another idle
-- node wakes; when the queues are empty, the ring's token goes.
-- #include publish
-- #include queue
-- #include stats
-- #include bucket

if redis.call('HEXISTS', KEYS[10], 'state') == 1 then
  -- paused: its queues stay as they are; the ring's token goes, so idle nodes block until resume rings it
  redis.call('DEL', KEYS[6])
  return {}
end

local max = tonumber(ARGV[1])
local budget = max + 1000
local counts = {}
local node, now, statePrefix = ARGV[2], ARGV[3], ARGV[4]
local names = {'admin', 'out', 'in', 'in'}
local taken = {}
local parts = tonumber(ARGV[9]) or 1

-- limit name (a pipeline, or '@' and an owner) -> its limits this call: cap {cap, running, added} and rate
-- {perSec, tokens}, each false when it has none (fields cap and rate of its pipelineH or ownerH, read once);
-- what changed is written at the end
local limits = {}
local function limits_of(name)
  local l = limits[name]
  if l then
    return l
  end
  local f
  if string.sub(name, 1, 1) == '@' then
    f = redis.call('HMGET', ARGV[11] .. string.sub(name, 2), 'cap', 'rate')
  else
    f = redis.call('HMGET', ARGV[7] .. name, 'cap', 'rate')
  end
  l = {cap = false, rate = false}
  local total = tonumber(f[1] or '')
  if total and total > 0 then
    local p = tonumber(ARGV[10]) or 0
    -- at least one: a cap below the number of partitions would otherwise leave some partitions' work held
    -- for good (such a cap lets up to one run per partition; see docs/decisions.md)
    l.cap = {cap = math.max(1, math.floor(total / parts) + ((p < total % parts) and 1 or 0)),
      running = tonumber(redis.call('HGET', KEYS[14], name) or '0'), added = 0}
  end
  local perSec = tonumber(f[2] or '')
  if perSec and perSec > 0 then
    perSec = perSec / parts
    local burst = math.max(1, perSec / 10)
    local b = redis.call('HMGET', KEYS[13], name .. ':t', name .. ':at')
    l.rate = {perSec = perSec, tokens = bucket_tokens(b[1], b[2], tonumber(now), perSec, burst)}
  end
  limits[name] = l
  return l
end

-- A transaction's limits: {pipeline's, owner's} (names and limits), or false when neither has a cap or rate
-- (the common case, decided once per pipeline and owner in a call)
local pairs_of = {}
local function limits_for(pipeline, owner)
  local byOwner = nested(pairs_of, pipeline)
  local both = byOwner[owner]
  if both == nil then
    local on = '@' .. owner
    local pl, ol = limits_of(pipeline), limits_of(on)
    both = (pl.cap or pl.rate or ol.cap or ol.rate) and {{pipeline, pl}, {on, ol}} or false
    byOwner[owner] = both
  end
  return both
end

-- The first of a transaction's limits with no room: no slot, or (rate: from the in-queue and held work only)
-- no token; nil when both have room.
local function blocked_by(q, both)
  for _, nl in ipairs(both) do
    local l = nl[2]
    if (l.rate and q >= 3 and l.rate.tokens < 1) or (l.cap and l.cap.running >= l.cap.cap) then
      return nl[1]
    end
  end
  return nil
end

-- owner -> how many of its admitted starts (fair share) left the in-queue here: as many of its waiting ones
-- come in (lib/queue.lua queue_refill), and may be taken in the same call
local released = {}

-- now, txId pairs of the runs taken: added to processingZ and inflightZ:<nodeId> once, before the reply
local running = {}

-- q: 1 admin, 2 out, 3 in, 4 held (a limit's with tokens or slots again: see take_held)
local function take(q, heldKey)
  while #taken < max and budget > 0 do
    local want = math.min(max - #taken, budget)
    local ids, scores
    if q >= 3 then
      -- the in-queue and held queues are sorted sets (lib/queue.lua): lowest score first
      local popped = redis.call('ZPOPMIN', q == 3 and KEYS[3] or heldKey, want)
      if #popped == 0 then break end
      ids, scores = {}, {}
      for j = 1, #popped, 2 do
        ids[#ids + 1] = popped[j]
        scores[#scores + 1] = popped[j + 1]
      end
    else
      ids = redis.call('LPOP', KEYS[q], want)
      if not ids then break end
    end
    budget = budget - #ids
    for i, id in ipairs(ids) do
      local key = statePrefix .. id
      local s = redis.call('HMGET', key, 'processingState', 'type', 'version', 'step', 'data', 'input',
        'owner', 'externalId', 'metadata', 'created', 'childStatus', 'childOutput', 'childNote', 'stepRetry',
        'switches', 'stepAttempt', 'trace', 'share', 'attempt')
      local admitted = s[18] == 'in'
      if admitted then
        released[s[7]] = (released[s[7]] or 0) + 1
      end
      local both = s[1] == 'queued' and limits_for(s[2], s[7])
      local blocked = both and blocked_by(q, both)
      if blocked then
        -- over its pipeline's or owner's rate or cap: held, off any worker, until tokens or a slot come
        redis.call('ZADD', ARGV[8] .. blocked, q >= 3 and scores[i] or 0, id)
        redis.call('SADD', KEYS[12], blocked)
        if admitted then
          redis.call('HSET', key, 'share', '')
        end
      elseif s[1] == 'queued' then
        if both then
          local slots = {}
          for _, nl in ipairs(both) do
            local l = nl[2]
            if l.rate and q >= 3 then
              l.rate.tokens = l.rate.tokens - 1
            end
            if l.cap then
              l.cap.running = l.cap.running + 1
              l.cap.added = l.cap.added + 1
              slots[#slots + 1] = nl[1]
            end
          end
          if #slots > 0 then
            redis.call('HSET', key, 'slot', KEYS[14], 'slotNames', table.concat(slots, ' '), 'slotHeld', KEYS[12],
              'slotRing', KEYS[6])
          end
        end
        local attempt = (tonumber(s[19]) or 0) + 1
        if attempt == 1 then
          stats_tally(counts, 'started', ARGV[5], s[2], s[7])
        end
        if admitted then
          redis.call('HSET', key, 'processingState', 'processing', 'node', node, 'updated', now, 'share', '',
            'attempt', attempt)
        else
          redis.call('HSET', key, 'processingState', 'processing', 'node', node, 'updated', now, 'attempt', attempt)
        end
        if s[15] then
          -- the step is about to see these switches: acknowledge them (see sleep.lua)
          local acks = {}
          for name, sw in pairs(cjson.decode(s[15])) do
            acks[name] = sw.seq
          end
          redis.call('HSET', key, 'acks', cjson.encode(acks))
        end
        running[#running + 1] = now
        running[#running + 1] = id
        taken[#taken + 1] = {id, attempt, s[2], s[3], s[4], s[5] or s[6], s[7], s[8], s[9], s[10], names[q],
          s[11] or '', s[12] or '', s[13] or '', s[14] or '0', s[15] or '', s[16] or '1', s[17] or ''}
      elseif admitted then
        redis.call('HDEL', key, 'share')
      end
    end
    if #ids < want then break end
  end
end

-- held work whose limit (a pipeline's or an owner's) has tokens or slots again, after the admin and out queues,
-- before the in-queue
local function take_held()
  for _, name in ipairs(redis.call('SMEMBERS', KEYS[12])) do
    local heldKey = ARGV[8] .. name
    local r = limits_of(name).rate
    local c = limits_of(name).cap
    if not r and not c then
      -- no longer limited: what it held goes back on the in-queue, in its order
      local all = redis.call('ZRANGE', heldKey, 0, -1, 'WITHSCORES')
      for j = 1, #all, 2 do
        redis.call('ZADD', KEYS[3], all[j + 1], all[j])
      end
      redis.call('DEL', heldKey)
    else
      local allow = max - #taken
      if r then
        allow = math.min(allow, math.floor(r.tokens))
      end
      if c then
        allow = math.min(allow, c.cap - c.running)
      end
      if allow > 0 then
        local before = max
        max = #taken + allow
        take(4, heldKey)
        max = before
      end
    end
    if redis.call('EXISTS', heldKey) == 0 then
      redis.call('SREM', KEYS[12], name)
    end
  end
end

take(1)
take(2)
take_held()
take(3)
while next(released) do
  local done = released
  released = {}
  if queue_refill(KEYS[11], ARGV[6], KEYS[3], statePrefix, done, now) == 0 or #taken >= max or budget <= 0 then
    break
  end
  take(3)
end
queue_refill(KEYS[11], ARGV[6], KEYS[3], statePrefix, released, now)

local left = redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3])
if left == 0 then
  -- nothing waits here: a token left on the ring would only wake a node for nothing, and would keep the
  -- next start from publishing its ring
  redis.call('DEL', KEYS[6])
elseif #taken >= max or budget <= 0 then
  queue_ring(KEYS[6], true)
end
for name, l in pairs(limits) do
  if l.cap and l.cap.added > 0 then
    redis.call('HINCRBY', KEYS[14], name, l.cap.added)
  end
  if l.rate then
    redis.call('HSET', KEYS[13], name .. ':t', tostring(l.rate.tokens), name .. ':at', now)
  end
end
queue_chunked('ZADD', KEYS[4], running)
queue_chunked('ZADD', KEYS[5], running)
stats_write({KEYS[7], KEYS[8], KEYS[9]}, now, counts)
local hint = false
for name, l in pairs(limits) do
  if l.rate and l.rate.tokens < 1 and redis.call('SISMEMBER', KEYS[12], name) == 1 then
    local ms = math.max(1, bucket_wait(l.rate.tokens, l.rate.perSec))
    if not hint or ms < hint then
      hint = ms
    end
  end
end
if hint then
  taken[#taken + 1] = hint
end
return taken
