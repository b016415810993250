-- dequeue: hand up to N queued transactions of one group to a node, admin first, then out, then in.
-- KEYS[1] qAdminL:<group>   KEYS[2] qOutL:<group>   KEYS[3] qInZ:<group>
-- KEYS[4] processingZ       KEYS[5] inflightZ:<nodeId>   KEYS[6] qRingL:<group>
-- KEYS[7..9] stats1H, stats2H, stats3H of the slots that hold now (a first dequeue counts as started)
-- KEYS[10] groupH:<group> (a paused or draining group takes nothing: see group-state.lua)
-- KEYS[11] qFairH:<group> (fair share: an admitted start taken lets its owner's next one in; lib/queue.lua)
-- KEYS[12] qHeldS:<group>   KEYS[13] qRateH:<group>   (rate limits, below)   KEYS[14] qRunH:<group> (caps)
-- ARGV[1] max (free worker slots)   ARGV[2] nodeId   ARGV[3] now (ms)
-- ARGV[4] the stateH key prefix (Keys.stateH("")): the popped txIds name their stateH keys, which cannot
--   be known before the pop, so those keys are the prefix and the txId
-- ARGV[5] the group (for the stats)
-- ARGV[6] the group's qOwnerZ key prefix (Keys.qOwnerZ(group, "")): an owner's own queue is known only from
--   the owner of a popped start
-- ARGV[7] the partition's pipelineH key prefix   ARGV[8] the group's qHeldZ key prefix (Keys.qHeldZ(group, ""))
--   ARGV[9] the number of partitions, ARGV[10] this one's index: a popped transaction's pipeline, and so its
--   limits and held queue, are known only from its state
-- ARGV[11] the partition's ownerH key prefix (Keys.ownerInPartitionH(p, "")): an owner's limits, like a
--   pipeline's, are known only from a popped transaction's state
-- Limits (a pipeline's or an owner's cap and rate): lib/limits.lua.
-- Replies: a list, one entry per transaction taken:
--   {txId, attempt, type, version, step, stepInput, owner, externalId, metadata, created, queue,
--    childStatus, childOutput, childNote, stepRetry, switches, stepAttempt, trace (its traceparent, or ''),
--    run (which run of the transaction: 1, or 1 + its reruns), takenOver (the step it was at when a node last
--    lost it while running it, reap.lua and requeue.lua; '' when never)}
--   and, last, when work is held by a rate limit with no token now, a number instead of an entry: the ms until
--   the first such limit has one (the node rings the group then, rather than waiting for a start or idleWait);
--   where queue is 'admin', 'out' or 'in', and the child fields are set when a child pipeline the
--   transaction waited for has ended (its result stands for the step at 'step'); stepAttempt is the
--   step's attempt under its retry policy (1 unless retry.lua raised it).
-- A txId whose state is not 'queued' (a stale duplicate, or gone) is dropped from the queue. A paused one (field
-- paused, pause.lua) leaves it too, parked: pausedQueue names the queue resume.lua puts it back on. One call pops
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
-- #include limits

local adminKey, outKey, inKey, processingKey, inflightKey, ringKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
  KEYS[6]
local stats1, stats2, stats3, groupKey, fairKey, heldKey, rateKey, runKey = KEYS[7], KEYS[8], KEYS[9], KEYS[10],
  KEYS[11], KEYS[12], KEYS[13], KEYS[14]
local max, node, now, statePrefix, group, ownerQueuePrefix = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5],
  ARGV[6]
local pipelinePrefix, heldPrefix, parts, partition = ARGV[7], ARGV[8], tonumber(ARGV[9]) or 1, tonumber(ARGV[10]) or 0
local ownerPrefix = ARGV[11]

if redis.call('HEXISTS', groupKey, 'state') == 1 then
  -- paused: its queues stay as they are; the ring's token goes, so idle nodes block until resume rings it
  redis.call('DEL', ringKey)
  return {}
end

local budget = max + 1000
local counts = {}
local names = {'admin', 'out', 'in', 'in'}
local taken = {}
-- the limits of this call (lib/limits.lua); what changed is written at the end
local lim = {all = {}, pairs = {}, pipelinePrefix = pipelinePrefix, ownerPrefix = ownerPrefix, runKey = runKey,
  rateKey = rateKey, partition = partition, parts = parts, now = tonumber(now)}
local limits = lim.all

-- the owners of the admitted starts (fair share) that left the in-queue here, one entry each, in the order they
-- left: as many of their waiting ones come in, in that order (lib/queue.lua queue_refill), and may be taken in
-- the same call
local released = {}

-- now, txId pairs of the runs taken: added to processingZ and inflightZ:<nodeId> once, before the reply
local running = {}

-- q: 1 admin, 2 out, 3 in, 4 held (a limit's with tokens or slots again: see take_held)
local function take(q, held)
  while #taken < max and budget > 0 do
    local want = math.min(max - #taken, budget)
    local ids, scores
    if q >= 3 then
      -- the in-queue and held queues are sorted sets (lib/queue.lua): lowest score first
      local popped = redis.call('ZPOPMIN', q == 3 and inKey or held, want)
      if #popped == 0 then break end
      ids, scores = {}, {}
      for j = 1, #popped, 2 do
        ids[#ids + 1] = popped[j]
        scores[#scores + 1] = popped[j + 1]
      end
    else
      ids = redis.call('LPOP', q == 1 and adminKey or outKey, want)
      if not ids then break end
    end
    budget = budget - #ids
    for i, id in ipairs(ids) do
      local key = statePrefix .. id
      local s = redis.call('HMGET', key, 'processingState', 'type', 'version', 'step', 'data', 'input',
        'owner', 'externalId', 'metadata', 'created', 'childStatus', 'childOutput', 'childNote', 'stepRetry',
        'switches', 'stepAttempt', 'trace', 'share', 'attempt', 'run', 'takenOver', 'paused')
      local admitted = s[18] == 'in'
      if admitted then
        released[#released + 1] = s[7]
      end
      local parked = s[1] == 'queued' and s[22]
      local both = s[1] == 'queued' and not parked and limits_for(lim, s[2], s[7])
      local blocked = both and limits_blocked(q, both)
      if parked then
        -- paused (pause.lua): off the queue and every worker until resume.lua puts it back on the one it came from
        redis.call('HSET', key, 'pausedQueue', names[q])
        if admitted then
          redis.call('HDEL', key, 'share')
        end
      elseif blocked then
        -- over its pipeline's or owner's rate or cap: held, off any worker, until tokens or a slot come
        redis.call('ZADD', heldPrefix .. blocked, q >= 3 and scores[i] or 0, id)
        redis.call('SADD', heldKey, blocked)
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
            redis.call('HSET', key, 'slot', runKey, 'slotNames', table.concat(slots, ' '), 'slotHeld', heldKey,
              'slotRing', ringKey)
          end
        end
        local attempt = (tonumber(s[19]) or 0) + 1
        if attempt == 1 then
          stats_tally(counts, 'started', group, s[2], s[7])
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
          s[11] or '', s[12] or '', s[13] or '', s[14] or '0', s[15] or '', s[16] or '1', s[17] or '', s[20] or '1',
          s[21] or ''}
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
  for _, name in ipairs(redis.call('SMEMBERS', heldKey)) do
    local held = heldPrefix .. name
    local r = limits_of(lim, name).rate
    local c = limits_of(lim, name).cap
    if not r and not c then
      -- no longer limited: what it held goes back on the in-queue, in its order
      local all = redis.call('ZRANGE', held, 0, -1, 'WITHSCORES')
      for j = 1, #all, 2 do
        redis.call('ZADD', inKey, all[j + 1], all[j])
      end
      redis.call('DEL', held)
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
        take(4, held)
        max = before
      end
    end
    if redis.call('EXISTS', held) == 0 then
      redis.call('SREM', heldKey, name)
    end
  end
end

take(1)
take(2)
take_held()
take(3)
while #released > 0 do
  local done = released
  released = {}
  if queue_refill(fairKey, ownerQueuePrefix, inKey, statePrefix, done, now) == 0 or #taken >= max or budget <= 0 then
    break
  end
  take(3)
end
queue_refill(fairKey, ownerQueuePrefix, inKey, statePrefix, released, now)

local left = redis.call('LLEN', adminKey) + redis.call('LLEN', outKey) + redis.call('ZCARD', inKey)
if left == 0 then
  -- nothing waits here: a token left on the ring would only wake a node for nothing, and would keep the
  -- next start from publishing its ring
  redis.call('DEL', ringKey)
elseif #taken >= max or budget <= 0 then
  queue_ring(ringKey, true)
end
for name, l in pairs(limits) do
  if l.cap and l.cap.added > 0 then
    redis.call('HINCRBY', runKey, name, l.cap.added)
  end
  if l.rate then
    redis.call('HSET', rateKey, name .. ':t', tostring(l.rate.tokens), name .. ':at', now)
  end
end
queue_chunked('ZADD', processingKey, running)
queue_chunked('ZADD', inflightKey, running)
stats_write({stats1, stats2, stats3}, now, counts)
local hint = false
for name, l in pairs(limits) do
  if l.rate and l.rate.tokens < 1 and redis.call('SISMEMBER', heldKey, name) == 1 then
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
