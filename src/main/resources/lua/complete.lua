-- complete: give running transactions their final status and output, schedule archiving, and notify.
-- Takes a batch: a node completes everything that finished since its last call in one round trip.
-- KEYS[1] processingZ   KEYS[2] inflightZ:<nodeId>   KEYS[3] toArchiveZ   KEYS[4] notify (channel)
-- KEYS[5] webhooksZ   KEYS[6] sleepingZ   KEYS[7] liveZ (the search index: a compensation started here is added)
-- KEYS[8] cancelL (the partition's cancel walk: a join decided here puts the branches still going on it)
-- KEYS[9] phaseZ:ended (a search index: each transaction that ends other than success is added, by created)
-- For transaction i (1..n), two keys from KEYS[9 + 2(i-1) + 1]: stateH:<txId>, webhookH:<txId>
-- KEYS[#KEYS] liveOwnersH, after every other key: a completion ends a live transaction (lib/live.lua); a
--   compensation started here begins one
-- ARGV[1] now (ms)   ARGV[2] archive delay (ms)
-- ARGV[3], ARGV[4], ARGV[5] the stateH, qOutL and qRingL key prefixes (Keys.stateH(""), …): a completed
--   child's parent, and the parent's group, are known only from the child's state, so the parent's keys
--   are built from them
-- ARGV[6], ARGV[7], ARGV[8] the partition's pipelineH, qInZ and webhookH key prefixes: a compensation's
--   pipeline and group, and the webhook of the transaction it compensates, are known only from the states
-- ARGV[8 + 7(i-1) + 1 ..] for transaction i: txId, attempt the node was given, status (success, failed,
--   aborted, cancelled, timeout, internal-error), output JSON or '', note or '', the last step's time
--   ("step:startMs:durationMs:node", appended to stepTimes) or '', the last failed attempt's error JSON
--   (appended to errors, see retry.lua) or ''
-- ARGV[#ARGV] limits.maxErrors, after every transaction's: errors keeps at most this many (lib/errors.lua)
-- Replies: a list with one code per transaction, in order:
--   'OK'          written (or written before by this same attempt with this same status: a retry)
--   'CANCELLED'   written, but as cancelled: its owner asked to cancel it while its last step ran, and a
--                 cancel asked for before the end wins over how the step ended
--   'NOT_FOUND'   no such transaction
--   'BAD_STATUS'  not a final status
--   'FENCED'      the caller no longer owns the transaction (a later attempt, or not processing); nothing written
--   then one more element: the call's stats counts (lib/stats.lua stats_flat; the caller writes them, stats-add.lua)
-- The call's completions are published on notify in one message, a line completed:<txId>:<status>:<owner>
-- each (one PUBLISH a call, not one a transaction: docs/decisions.md); one with a webhook URL is
-- scheduled for delivery (see lib/webhooks.lua). A completed child pipeline hands its status, output and
-- note to its parent, if the parent still waits for it, and queues the parent on qOutL of the parent's
-- group; a completed branch of a parallel step counts in its parent's join, which the branch that decides
-- it hands back the same way, cancelling the branches still going (lib/fork.lua: through the cancel walk, of
-- which this call carries on at most 20 entries when it put any on it). Each completion counts as completed
-- and completed.<status> in the stats, and each attempt of this run's steps (stepTimes) in its step's
-- duration histogram (lib/stats.lua stats_step_times). One that failed and
-- names an onFailure pipeline starts its compensation, and waits for it before archiving and its webhook;
-- a compensation that ends lets the transaction it compensated go on to both.
-- #include publish
-- #include codes
-- #include fence
-- #include queue
-- #include webhooks
-- #include stats
-- #include live
-- #include compensate
-- #include gate
-- #include fork
-- #include errors

local processingKey, inflightKey, toArchiveKey, notifyKey, webhooksKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local sleepingKey, liveKey, walkKey = KEYS[6], KEYS[7], KEYS[8]
local endedKey, liveOwnersKey = KEYS[9], KEYS[#KEYS]
local now, archiveDelay, statePrefix, outPrefix, ringPrefix = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local pipelinePrefix, inPrefix, webhookPrefix = ARGV[6], ARGV[7], ARGV[8]
local maxErrors = tonumber(ARGV[#ARGV])
local txCount = (#KEYS - 10) / 2
-- transaction i: its stateH and webhookH keys
local function tx_keys(i) return KEYS[9 + 2 * (i - 1) + 1], KEYS[9 + 2 * (i - 1) + 2] end
-- transaction i: txId, attempt, status, output, note, the last step's time, the last failed attempt's error
local function tx_args(i)
  local a = 8 + 7 * (i - 1) + 1
  return ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
end

local finals = {success = 1, failed = 1, aborted = 1, cancelled = 1, timeout = 1, ['internal-error'] = 1}
-- what a completion drops from the state, as read into fields 18-24 below (data only when it succeeded)
local DROPPED = {'childStatus', 'childOutput', 'childNote', 'waitingFor', 'retry', 'stepAttempt', 'data'}
local prefixes = {state = statePrefix, pipeline = pipelinePrefix, queue = inPrefix, ring = ringPrefix,
  webhook = webhookPrefix, live = liveKey, liveOwners = live_batch(liveOwnersKey), ended = endedKey}
local archiveAt = tonumber(now) + archiveDelay
local replies = {}
local counts = {}
prefixes.out = outPrefix
local env = {now = now, archiveAt = archiveAt, counts = counts, archiveKey = toArchiveKey,
  notifyKey = notifyKey, sleepingKey = sleepingKey, prefixes = prefixes, walkKey = walkKey}

local function wakeParent(parent, group, child, status, output, note)
  local pkey = statePrefix .. parent
  local p = redis.call('HMGET', pkey, 'processingState', 'waitingFor')
  if p[1] == 'sleeping' and p[2] == 'fork' then
    fork_branch_ended(parent, group, child, status, output, note, env)
    return
  end
  if p[1] ~= 'sleeping' or p[2] ~= child then
    return
  end
  redis.call('HSET', pkey, 'processingState', 'queued', 'childStatus', status, 'childOutput', output,
    'childNote', note, 'updated', now)
  queue_push(outPrefix .. group, ringPrefix .. group, parent)
end

-- written once per call, after the loop: who leaves processingZ and this node's inflightZ, and who waits for
-- the archive
local done, archived, published = {}, {}, {}

for i = 1, txCount do
  local key, webhookKey = tx_keys(i)
  local id, attempt, status, output, givenNote, stepTime, errorJson = tx_args(i)
  -- one read for everything this completion needs (its webhook's fields too: fields 13-17)
  -- and fields 18-24, which a completion drops: most transactions have none of them, and then need no HDEL
  local s = redis.call('HMGET', key, 'attempt', 'processingState', 'status', 'owner', 'parentTxId', 'parentGroup',
    'group', 'type', 'cancelRequested', 'errors', 'compensationFor', 'slot', 'stepTimes',
    'webhookUrl', 'webhookUrlHash', 'webhookDelay', 'trace',
    'childStatus', 'childOutput', 'childNote', 'waitingFor', 'retry', 'stepAttempt', 'data', 'created', 'gateH',
    'version', 'runTimesFrom')
  local cancel = s[9] == '1' and finals[status] and status ~= 'cancelled'
  if not finals[status] then
    replies[i] = CODE.BAD_STATUS
  elseif not s[1] then
    replies[i] = CODE.NOT_FOUND
  elseif s[1] == attempt and s[2] == 'complete' and (s[3] == status or (cancel and s[3] == 'cancelled')) then
    replies[i] = cancel and CODE.CANCELLED or CODE.OK
  elseif not fence_holds(s[1], s[2], attempt) then
    replies[i] = CODE.FENCED
  else
    local note = givenNote
    if cancel then
      note = 'cancelled by its owner while its last step ran (the step ended ' .. status .. ')'
      status = 'cancelled'
    end
    local fields = {'status', status, 'processingState', 'complete', 'output', output, 'note', note,
      'completed', now, 'updated', now}
    if errorJson ~= '' then
      fields[#fields + 1] = 'errors'
      fields[#fields + 1] = errors_append(s[10], errorJson, maxErrors)
    end
    if stepTime ~= '' then
      fields[#fields + 1] = 'stepTimes'
      fields[#fields + 1] = (s[13] or '') .. stepTime .. ';'
    end
    redis.call('HSET', key, unpack(fields))
    -- the failed step's input (data) stays with a transaction that did not succeed: rerun.lua runs it again
    local drop = {}
    for f = 18, status == 'success' and 24 or 23 do
      if s[f] then
        drop[#drop + 1] = DROPPED[f - 17]
      end
    end
    if #drop > 0 then
      redis.call('HDEL', key, unpack(drop))
    end
    done[#done + 1] = id
    if status ~= 'success' and s[25] then
      redis.call('ZADD', endedKey, s[25], id)
    end
    live_ended(prefixes.liveOwners, s[4])
    if s[26] then
      gate_release(key, id, prefixes, now) -- a singleton's next waiter starts (lib/gate.lua)
    end
    if s[12] then
      queue_slot_free(key) -- only a run under a concurrency cap holds a slot: no read for the others
    end
    published[#published + 1] = 'completed:' .. id .. ':' .. status .. ':' .. (s[4] or '')
    if not compensate_start(key, id, status, note, now, prefixes, counts) then
      archived[#archived + 1] = archiveAt
      archived[#archived + 1] = id
      webhooks_schedule(key, webhookKey, webhooksKey, notifyKey, id, now, {s[14], s[15], s[16], s[4], s[17]})
    end
    if s[11] then
      compensate_ended(s[11], id, status, note, now, archiveAt, prefixes, toArchiveKey, webhooksKey, notifyKey)
    end
    stats_tally(counts, 'completed', s[7], s[8], s[4])
    stats_tally(counts, 'completed.' .. status, s[7], s[8], s[4])
    if s[27] and s[8] then
      -- this run's step attempts (a rerun's begin at runTimesFrom): their durations per step
      local times = string.sub(s[13] or '', (tonumber(s[28]) or 0) + 1) .. (stepTime ~= '' and stepTime .. ';' or '')
      stats_step_times(counts, s[27], s[8], times, s[7])
      stats_version(counts, 'vended.' .. s[27] .. '.' .. status, s[8])
    end
    if s[5] then
      wakeParent(s[5], s[6], id, status, output, note)
    end
    replies[i] = cancel and CODE.CANCELLED or CODE.OK
  end
end
-- before the walk: a completion is heard before the branch cancellations it caused
if #published > 0 then
  publish(notifyKey, table.concat(published, '\n'))
end
if env.walked then
  fork_walk(env, WALK_BUDGET, 0)
end
queue_chunked('ZREM', processingKey, done)
queue_chunked('ZREM', inflightKey, done)
queue_chunked('ZADD', toArchiveKey, archived)
live_flush(prefixes.liveOwners)
replies[txCount + 1] = stats_flat(counts)
return replies
