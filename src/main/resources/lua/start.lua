-- start: create transactions and queue each on its pipeline's node group, or take it for the starting node
-- (the hand-off, below).
-- Takes a batch: a node starts everything that arrived while its last call was out in one round trip.
-- KEYS[1] sleepingZ   KEYS[2] liveZ (the search index: every transaction started is added, scored by its created time)
-- KEYS[3..9] the hand-off (below), all of the starting node's group: qAdminL, qOutL, qInZ, qHeldS, groupH,
--   processingZ, inflightZ:<nodeId> (any names when ARGV[7] is 0)
-- For transaction i (1..n), nine keys from KEYS[9 + 9(i-1) + 1]:
--   stateH:<txId>   pipelineH:<type>   qInZ:<group> (the group the caller expects; checked against pipelineH)
--   qRingL:<group> (wake-up list idle nodes of the group block on)
--   externalId:<owner>:<externalId>, or stateH:<txId> again when there is no externalId (never written then)
--   qFairH:<group>   qOwnerZ:<group>:<owner>   (fair share: lib/queue.lua queue_share)
--   gateH:<id>   gateZ:<id> of its gate (lib/gate.lua), or stateH:<txId> twice when it has none (never written then)
-- KEYS[#KEYS] liveOwnersH (owner -> live transactions in this partition; lib/live.lua), after every other key
-- ARGV[1] now (ms)   ARGV[2] externalId uniqueness period (ms)   ARGV[3] the head start of one priority level
--   in the in-queue (ms: transactions.priorityAging / 9; see lib/queue.lua)   ARGV[4] transactions.ownerShare
--   ARGV[5] the partition's ownerH key prefix (Keys.ownerInPartitionH(p, "")): an owner is known only from its
--   transaction's args; its limits (weight: lib/queue.lua queue_share) are read once per owner of the batch
-- ARGV[6] the starting node's id and ARGV[7] its free worker slots it offers (0: none), ARGV[8] its group
-- The hand-off: an offered transaction (its arg 16: it goes to the starting node's group and starts at once) is
-- taken for the starting node, as dequeue.lua would take it (processing, attempt 1, in processingZ and
-- inflightZ:<nodeId>), up to ARGV[7] of them, when the group has nothing waiting (admin, out and in-queues and held
-- work empty, neither paused nor draining) and neither pipeline nor owner has a cap or a rate; once one of the
-- group goes on the in-queue, the rest of the call's go there too. A node that dies before it reads the reply
-- leaves them where the reaper finds them, as after a dequeue.
-- For transaction i, eighteen args from ARGV[8 + 18(i-1) + 1]:
--   txId, owner, type, externalId or '', metadata JSON, input JSON, expected group, webhook URL or '',
--   the URL's hash or '', its completion webhook's first delay (ms; complete.lua) or '', '1' when progress reports
--   go to the webhook too or '', when it starts (ms: 'scheduled' in sleepingZ until the reaper's wake queues it)
--   or '' (at once), its priority (0-9) or '' (the pipeline's), its trace (W3C traceparent of its start span) or '',
--   its owner's share of the group's in-queue (transactions.ownerShare x weight; 0: no fair share),
--   '1' when the caller offers it for the hand-off (above) or '', its gate as decided (JSON: lib/gate.lua) or '',
--   the gate JSON of its pipeline the caller went by (pipelineH field gate) or '': another is GROUP_CHANGED
-- ARGV[#ARGV - 1] limits.maxLive (an owner's own maxLive, field maxLive of its ownerH, replaces it)
-- ARGV[#ARGV] the number of partitions: each holds the limit split evenly, rounded up (lib/live.lua)
-- Replies: a list with one {code, detail} per transaction, in order:
--   {'OK', version, processingState}      started: 'queued', 'scheduled' (it has a start time), 'pending' (waits
--                                         on its gate), or 'processing': the hand-off, attempt 1 at step 0 (the caller
--                                         has the rest of the run: it sent it); it reads the state here, never decides it
--   {'DUPLICATE_TX', ''}                  a transaction with this txId exists
--   {'UNKNOWN_TYPE', ''}                  no pipeline of that name
--   {'NOT_STARTABLE', ''}                 the pipeline is not a transaction type
--   {'DISABLED', ''}                      the pipeline is disabled: it takes no new starts
--   {'GROUP_CHANGED', group}              the pipeline now belongs to another group: call again with its keys
--   {'DUPLICATE_EXTERNAL_ID', txId}       the owner used this externalId within the period
--   {'LIVE_LIMIT', 'limit:here'}          the owner has its share of maxLive live in this partition already
--                                         (limit: its maxLive; here: the share of it this partition holds)
--   {'DEBOUNCED', txId} {'THROTTLED', ms} {'GATE_BUSY', txId}   its gate decided (lib/gate.lua gate_plan)
--   then one more element: the call's stats counts (lib/stats.lua stats_flat; the caller writes them, stats-add.lua)
-- Every check of a transaction runs before its first write, so a refused start leaves nothing behind.
-- Each start counts as queued and as vstarted.<version>; in a rollout its txId's hash picks it (lib/rollout.lua).
-- #include publish
-- #include codes
-- #include queue
-- #include stats
-- #include live
-- #include gate
-- #include rollout

local sleepingKey, liveKey = KEYS[1], KEYS[2]
local takerAdminKey, takerOutKey, takerInKey, takerHeldKey, takerGroupKey = KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local processingKey, inflightKey, liveOwnersKey = KEYS[8], KEYS[9], KEYS[#KEYS]
local now, period, priorityStep, ownerShare = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local ownerPrefix = ARGV[5]
local takerNode, offer, takerGroup = ARGV[6], tonumber(ARGV[7]) or 0, ARGV[8]
local maxLive, partitions = tonumber(ARGV[#ARGV - 1]), tonumber(ARGV[#ARGV])
local txCount = (#KEYS - 10) / 9
-- transaction i: stateH, pipelineH, qInZ, qRingL, externalId (or stateH again), qFairH, qOwnerZ, gateH, gateZ
local function tx_keys(i)
  local k = 9 + 9 * (i - 1)
  return KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6], KEYS[k + 7], KEYS[k + 8],
    KEYS[k + 9]
end
-- transaction i: its eighteen args, in the header's order
local function tx_args(i)
  local a = 8 + 18 * (i - 1)
  return ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[a + 8],
    ARGV[a + 9], ARGV[a + 10], ARGV[a + 11], ARGV[a + 12], ARGV[a + 13], ARGV[a + 14], ARGV[a + 15], ARGV[a + 16],
    ARGV[a + 17], ARGV[a + 18]
end

local liveCount = live_batch(liveOwnersKey)
local owners = {}
local function owner_limits(owner) return live_owner(owners, ownerPrefix, owner, maxLive) end
local replies, counts, live = {}, {}, {}
-- read once per call: a pipeline's fields (by pipelineH key), and per in-queue what goes on it (written after
-- the loop, with one ring per queue)
local pipelines = {}
local ins = {}
-- the hand-off: how many more may be taken for the starting node, whether its group has nothing waiting (nil:
-- not looked yet), and the runs taken (now, txId pairs for processingZ and inflightZ)
local idle
local handed = {}
local function may_hand(pipelineLimited, owner)
  if offer <= 0 or pipelineLimited then
    return false
  end
  if idle == nil then
    -- Redis deletes an emptied list, set or sorted set, so one EXISTS tells all four queues are empty; groupH is
    -- there only while the group is paused or draining (group-state.lua deletes it on resume)
    idle = redis.call('EXISTS', takerAdminKey, takerOutKey, takerInKey, takerHeldKey, takerGroupKey) == 0
  end
  if not idle then
    return false
  end
  return not owner_limits(owner).limited
end

local function start(i)
  local stateKey, pipelineKey, inKey, ringKey, externalKey, fairKey, ownerQueueKey, gateKey, gateZKey = tx_keys(i)
  local txId, owner, txType, externalId, metadata, input, group, webhookUrl, webhookHash, webhookDelay,
    webhookProgress, startAt, givenPriority, trace, shareWeight, offered, gate, pipelineGate = tx_args(i)
  if redis.call('EXISTS', stateKey) == 1 then
    return {CODE.DUPLICATE_TX, ''}
  end
  local p = pipelines[pipelineKey]
  if not p then
    p = redis.call('HMGET', pipelineKey, 'version', 'nodeGroup', 'isTransactionType', 'onFailure', 'disabled',
      'priority', 'cap', 'rate', 'gate', 'stable', 'share', 'stableOnFailure')
    p.limited = (tonumber(p[7] or '') or 0) > 0 or (tonumber(p[8] or '') or 0) > 0
    pipelines[pipelineKey] = p
  end
  if not p[1] then
    return {CODE.UNKNOWN_TYPE, ''}
  end
  if p[3] ~= '1' then
    return {CODE.NOT_STARTABLE, ''}
  end
  if p[5] == '1' then
    return {CODE.DISABLED, ''}
  end
  if p[2] ~= group or (p[9] or '') ~= pipelineGate then
    return {CODE.GROUP_CHANGED, p[2]}
  end
  local version, onFailure = rollout_pick(txId, p[1], p[4], p[10], p[11], p[12])
  local plan, answer = gate_plan(gate, gateKey, gateZKey, sleepingKey, stateKey, txId, now, metadata, input)
  if answer then
    return answer
  end
  local held = plan and plan.hold
  if plan then
    startAt = plan.startAt -- the caller gives a gated start no time of its own
    offered = startAt == '' and not held and offered or ''
  end
  local limit = owner_limits(owner).maxLive
  local room, here = live_room(liveCount, owner, limit, partitions)
  if not room then
    return {CODE.LIVE_LIMIT, limit .. ':' .. here}
  end
  if externalId ~= '' then
    local existing = redis.call('GET', externalKey)
    if existing then
      return {CODE.DUPLICATE_EXTERNAL_ID, existing}
    end
    redis.call('SET', externalKey, txId, 'PX', period)
  end
  local share, fair
  -- taken for the starting node: nothing waits in its group, so it needs no share of the in-queue either
  local hand = offered == '1' and may_hand(p.limited, owner)
  if startAt == '' and not hand and not held then
    share, fair = queue_share(fairKey, ownerQueueKey, owner, tonumber(shareWeight) or 0,
      ownerShare, ownerPrefix .. owner)
  end
  local fields = {'owner', owner, 'externalId', externalId, 'type', txType, 'version', version, 'group',
    p[2], 'status', 'running', 'processingState', 'queued', 'attempt', 0, 'step', 0,
    'created', now, 'updated', now, 'metadata', metadata, 'input', input}
  if hand then
    fields[14] = 'processing'
    fields[16] = 1
    fields[#fields + 1] = 'node'
    fields[#fields + 1] = takerNode
  end
  if share then
    fields[#fields + 1] = 'share'
    fields[#fields + 1] = share
  end
  if held then
    fields[14] = 'pending'
  end
  redis.call('HSET', stateKey, unpack(fields))
  if plan then
    gate_commit(plan, gateKey, gateZKey, stateKey, txId, now)
  end
  local priority = tonumber(givenPriority ~= '' and givenPriority or (p[6] or '0')) or 0
  local boost = priority * priorityStep
  if priority ~= 0 then
    redis.call('HSET', stateKey, 'priority', priority, 'qBoost', boost)
  end
  if trace ~= '' then
    redis.call('HSET', stateKey, 'trace', trace)
  end
  if onFailure and onFailure ~= '' then
    -- the version's compensation, held with the transaction like its version (see lib/compensate.lua)
    redis.call('HSET', stateKey, 'onFailure', onFailure)
  end
  if webhookUrl ~= '' then
    redis.call('HSET', stateKey, 'webhookUrl', webhookUrl, 'webhookUrlHash', webhookHash, 'webhookDelay', webhookDelay,
      'webhookProgress', webhookProgress)
  end
  if startAt ~= '' then
    redis.call('HSET', stateKey, 'processingState', 'scheduled', 'startAt', startAt)
    redis.call('ZADD', sleepingKey, startAt, txId)
  elseif held then -- waits behind its singleton's live transaction (lib/gate.lua)
  elseif hand then
    offer = offer - 1
    handed[#handed + 1] = now
    handed[#handed + 1] = txId
    stats_tally(counts, 'started', p[2], txType, owner)
  elseif share == 'wait' then
    queue_wait(fair, txId, now, boost, i)
  else
    if p[2] == takerGroup then
      offer = 0 -- work of the starting node's group waits now: what follows must not pass it
    end
    local q = ins[inKey]
    if not q then
      q = {ring = ringKey, adds = {}}
      ins[inKey] = q
    end
    q.adds[#q.adds + 1] = queue_in_score(now, boost, i)
    q.adds[#q.adds + 1] = txId
  end
  stats_tally(counts, 'queued', p[2], txType, owner)
  stats_version(counts, 'vstarted.' .. version, txType)
  live_began(liveCount, owner)
  live[#live + 1] = now
  live[#live + 1] = txId
  return {CODE.OK, version, hand and 'processing' or startAt ~= '' and 'scheduled' or held and 'pending' or 'queued'}
end

for i = 1, txCount do
  replies[i] = start(i)
end
queue_chunked('ZADD', processingKey, handed)
queue_chunked('ZADD', inflightKey, handed)
for queueKey, q in pairs(ins) do
  queue_chunked('ZADD', queueKey, q.adds)
  queue_ring(q.ring)
end
if #live > 0 then
  redis.call('ZADD', liveKey, unpack(live))
end
queue_fair_flush()
live_flush(liveCount)
replies[txCount + 1] = stats_flat(counts)
return replies
