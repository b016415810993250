-- rerun: run an ended transaction again under its txId, from the step that failed (with the input that step
-- had, and so the outputs of the steps before it) or from the first step with the transaction's input.
-- KEYS[1] stateH:<txId>   toArchiveKey toArchiveZ   KEYS[3..5] stats1H, stats2H, stats3H of the slots that hold now
-- liveKey liveZ (the search index: a transaction brought back from the archive is added again)
-- liveOwnersKey liveOwnersH (it is live again: lib/live.lua)
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] now (ms)   ARGV[4] 'failed' (from the step that failed) or 'start'
-- ARGV[5], ARGV[6] the qInZ and qRingL key prefixes (Keys.qInZ(""), …): the transaction's group is known only
--   from its state, so its queue keys are a prefix and the group
-- archivedJson the archived state, JSON {field: value, …}, or '': when Redis no longer holds the transaction it is
--   restored from this first (an archived transaction is brought back)
-- ARGV[8] limits.maxErrors: runs keeps at most this many, the oldest folded into one (lib/errors.lua)
-- Replies:
--   {'OK', step}                   queued again (step: the index it runs from); the run that ended is kept
--                                  in the field runs, its attempts' errors stay in errors; the field run
--                                  counts this run (2 for the first rerun) and takenOver is cleared
--   {'NOT_FOUND'}                  no such transaction (nor an archived state given), or another owner's
--   {'NOT_RERUNNABLE', status}     it is running, or it ended success or aborted: nothing written
--   {'NO_STEP_INPUT'}              the failed step's input was not kept (it ended before that was kept): only
--                                  a run from the start is possible; nothing written
-- #include publish
-- #include codes
-- #include queue
-- #include stats
-- #include live
-- #include errors

local key, toArchiveKey, stats1, stats2, stats3, liveKey, liveOwnersKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
  KEYS[6], KEYS[7]
local id, owner, now, from, inPrefix, ringPrefix, archivedJson = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6],
  ARGV[7]
local maxErrors = tonumber(ARGV[8]) or 20
if redis.call('EXISTS', key) == 0 then
  if archivedJson == '' then
    return {CODE.NOT_FOUND}
  end
  local archived = cjson.decode(archivedJson)
  if archived.owner ~= owner then
    return {CODE.NOT_FOUND}
  end
  for f, v in pairs(archived) do
    redis.call('HSET', key, f, v)
  end
  redis.call('ZADD', liveKey, tonumber(archived.created) or tonumber(now), id)
end

local s = redis.call('HMGET', key, 'owner', 'status', 'processingState', 'step', 'data', 'input', 'group', 'type',
  'note', 'completed', 'runs', 'webhook', 'compensation')
if s[1] ~= owner then
  return {CODE.NOT_FOUND}
end
if s[3] ~= 'complete' or s[2] == 'success' or s[2] == 'aborted' then
  return {CODE.NOT_RERUNNABLE, s[3] ~= 'complete' and 'running' or s[2]}
end
local step, data = tonumber(s[4] or '0'), s[5]
if from == 'start' or step == 0 then
  step, data = 0, s[6]
elseif not data then
  return {CODE.NO_STEP_INPUT}
end

-- the run that ended, kept for the history (appended as text: only ever read whole)
local ended = cjson.encode({status = s[2], note = s[9] or '', step = tonumber(s[4] or '0') + 1,
  completed = tonumber(s[10] or '0'), webhook = s[12] and cjson.decode(s[12]) or nil,
  compensation = s[13] and cjson.decode(s[13]) or nil})
local runs = runs_append(s[11], ended, maxErrors)
-- run numbers this run (1 + the reruns so far): its steps' idempotency keys are new (<txId>:<step>:r<run>)
local run = (tonumber(redis.call('HGET', key, 'run')) or 1) + 1
-- runTimesFrom: this run's step times begin here in stepTimes (complete counts only those in the stats)
redis.call('HSET', key, 'status', 'running', 'processingState', 'queued', 'step', step, 'data', data,
  'runs', runs, 'run', run, 'runTimesFrom', redis.call('HSTRLEN', key, 'stepTimes'), 'updated', now)
redis.call('HDEL', key, 'completed', 'output', 'note', 'cancelRequested', 'retry', 'stepAttempt', 'childStatus',
  'childOutput', 'childNote', 'waitingFor', 'waitingSwitch', 'stepRetry', 'webhook', 'compensation', 'takenOver',
  'paused', 'pausedQueue', 'pausedWake')
-- it is not finished any more: archiving waits for its next completion (archive.lua leaves it alone)
redis.call('ZREM', toArchiveKey, id)
local liveCount = live_batch(liveOwnersKey)
live_began(liveCount, owner)
live_flush(liveCount)
queue_push_in(inPrefix .. s[7], ringPrefix .. s[7], id, now, redis.call('HGET', key, 'qBoost'))
local counts = {}
stats_tally(counts, 'queued', s[7], s[8], owner)
stats_write({stats1, stats2, stats3}, now, counts)
return {CODE.OK, step}
