-- cancel: end an owner's transaction as cancelled; at once when it waits, at its next step boundary when running.
-- KEYS[1] stateH:<txId>   KEYS[2] toArchiveZ   KEYS[3] notify (channel)   KEYS[4] sleepingZ
-- KEYS[5] webhookH:<txId>   KEYS[6] webhooksZ   KEYS[7..9] stats1H, stats2H, stats3H of the slots that hold now
-- KEYS[10] liveZ (the search index: a compensation started here is added)
-- KEYS[11] cancelL (the partition's cancel walk, lib/fork.lua)
-- KEYS[12] liveOwnersH (each transaction ended here stops counting as live; a compensation starts to: lib/live.lua)
-- KEYS[13] phaseZ:ended (a search index: each transaction cancelled here is added, by created)
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] now (ms)   ARGV[4] archive delay (ms)
-- ARGV[5], ARGV[6], ARGV[7] the stateH, qOutL and qRingL key prefixes (Keys.stateH(""), …): the child a
--   transaction waits for (field waitingFor) and the parent that waits for it (parentTxId, parentGroup) are
--   known only from its state, so their keys are a prefix and a txId or group (all in its partition)
-- ARGV[8], ARGV[9], ARGV[10] the partition's pipelineH, qInZ and webhookH key prefixes: likewise for its
--   compensation (lib/compensate.lua) and, when it is a compensation, the transaction it compensates
-- ARGV[11], ARGV[12] the partition's qFairH and qOwnerZ key prefixes (Keys.qFairH(""), Keys.qOwnerZPrefix()):
--   a queued start under fair share leaves its group's in-queue, or its owner's own queue, at once, and an
--   admitted one lets the owner's next in (lib/queue.lua)
-- Replies:
--   {'CANCELLED', pending, floor}  it was queued or sleeping: now complete with status cancelled, notified,
--                             scheduled for archiving (a queue entry left behind is dropped by dequeue);
--                             pending: the walk's entries above floor (cancelL's length before this call):
--                             transactions of its tree found but not cancelled yet, a lower bound (what they
--                             wait for is found as they end); 0 when the tree is done (cancel-walk.lua goes on)
--   {'CANCEL_REQUESTED'}      it is running: the node running it ends it cancelled at its next checkpoint,
--                             sleep, hop or completion; published on notify as cancel:<txId> so a step
--                             that asks (ctx.cancelled()) can stop early
--   {'ALREADY_FINAL', status} it had ended already; nothing written
--   {'NOT_FOUND'}             no such transaction, or another owner's: nothing written
-- Cancel reaches the whole chain: a transaction waiting for a child pipeline, or for the branches of a
-- parallel step, takes them with it (and their children, down the chain): a waiting child ends cancelled at
-- once, a running one at its next boundary, at most 20 of them in this call (the walk, lib/fork.lua). A
-- cancelled child whose parent waits for it hands 'cancelled' back, and the parent is queued
-- on qOutL of its group to end cancelled too (as complete.lua hands back a child's result); a cancelled
-- branch counts as a branch that did not succeed in its parent's join (lib/fork.lua). A cancelled
-- transaction whose pipeline names onFailure starts its compensation (archiving and webhook wait for it).
-- #include publish
-- #include codes
-- #include queue
-- #include webhooks
-- #include stats
-- #include live
-- #include compensate
-- #include gate
-- #include fork

local key, toArchiveKey, notifyKey, sleepingKey, webhookKey, webhooksKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4],
  KEYS[5], KEYS[6]
local stats1, stats2, stats3, liveKey, walkKey, liveOwnersKey = KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local txId, owner, now, archiveDelay = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local statePrefix, outPrefix, ringPrefix, pipelinePrefix, inPrefix, webhookPrefix = ARGV[5], ARGV[6], ARGV[7], ARGV[8],
  ARGV[9], ARGV[10]
local fairPrefix, ownerPrefix = ARGV[11], ARGV[12]

local env = {now = now, archiveAt = tonumber(now) + archiveDelay, counts = {}, archiveKey = toArchiveKey,
  notifyKey = notifyKey, sleepingKey = sleepingKey, prefixes = {state = statePrefix, pipeline = pipelinePrefix,
  queue = inPrefix, out = outPrefix, ring = ringPrefix, webhook = webhookPrefix, live = liveKey,
  liveOwners = live_batch(liveOwnersKey), ended = KEYS[13]}, walkKey = walkKey}
local prefixes, counts, archiveAt = env.prefixes, env.counts, env.archiveAt

local s = redis.call('HMGET', key, 'processingState', 'status', 'owner', 'group', 'type', 'waitingFor',
  'parentTxId', 'parentGroup', 'compensationFor', 'fork')
if not s[1] or s[3] ~= owner then
  return {CODE.NOT_FOUND}
end
if s[1] == 'complete' then
  return {CODE.ALREADY_FINAL, s[2]}
end
if s[1] == 'processing' then
  redis.call('HSET', key, 'cancelRequested', '1', 'updated', now)
  publish(notifyKey, 'cancel:' .. txId)
  return {CODE.CANCEL_REQUESTED}
end
local share = redis.call('HGET', key, 'share')
if (share == 'in' or share == 'wait') and s[1] == 'queued' then
  redis.call('HDEL', key, 'share')
  local fairKey, ownerKey = fairPrefix .. s[4], ownerPrefix .. s[4] .. ':' .. s[3]
  if share == 'in' then
    redis.call('ZREM', inPrefix .. s[4], txId)
    queue_release(fairKey, ownerKey, inPrefix .. s[4], statePrefix, s[3], now)
  elseif redis.call('ZREM', ownerKey, txId) == 1 then
    if redis.call('HINCRBY', fairKey, '*', -1) <= 0 then
      redis.call('HDEL', fairKey, '*')
    end
  end
end
if not fork_end_cancelled(key, txId, 'cancelled by its owner', s[3], s[4], s[5], env) then
  webhooks_schedule(key, webhookKey, webhooksKey, notifyKey, txId, now)
end
if s[9] then
  compensate_ended(s[9], txId, 'cancelled', 'cancelled by its owner', now, archiveAt, prefixes, toArchiveKey,
    webhooksKey, notifyKey)
end

-- down the chain of children (or parallel branches) this one waited for: on the walk, above what it held
local floor = redis.call('LLEN', walkKey)
fork_cancel_children(txId, s[6], s[10], env)

-- up to the parent waiting for this one (as its child, or as a branch of its parallel step)
if s[7] then
  local pkey = statePrefix .. s[7]
  local p = redis.call('HMGET', pkey, 'processingState', 'waitingFor')
  if p[1] == 'sleeping' and p[2] == txId then
    redis.call('HSET', pkey, 'processingState', 'queued', 'childStatus', 'cancelled', 'childOutput', '',
      'childNote', 'cancelled by its owner', 'updated', now)
    queue_push(outPrefix .. s[8], ringPrefix .. s[8], s[7])
  elseif p[1] == 'sleeping' and p[2] == 'fork' then
    fork_branch_ended(s[7], s[8], txId, 'cancelled', '', 'cancelled by its owner', env)
  end
end
local pending = fork_walk(env, WALK_BUDGET, floor)
stats_write({stats1, stats2, stats3}, now, counts)
live_flush(prefixes.liveOwners)
return {CODE.CANCELLED, pending, floor}
