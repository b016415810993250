-- checkpoint: record that a step finished, so a recovered transaction resumes at the next step.
-- KEYS[1] stateH:<txId>   KEYS[2] processingZ (when given: a paused one leaves it, below)
-- ARGV[1] attempt the node was given   ARGV[2] index of the next step   ARGV[3] next step's input JSON
-- ARGV[4] now (ms)   ARGV[5] the step just run, "step:startMs:durationMs:node:outputSize", or '' (appended to stepTimes)
-- ARGV[6] txId   ARGV[7] the partition's inflightZ key prefix (Keys.inflightZ(p, "")): with KEYS[2], the node
--   running it is known only from its state
-- ARGV[8], ARGV[9] the partition's qInZ and qRingL key prefixes: a transaction marked to migrate (migrate.lua) is
--   queued again on its group's in-queue, known only from its state
-- ARGV[10] the most entries kept in its migrations history (limits.maxErrors)
-- Replies:
--   {'OK'}
--   {'NOT_FOUND'}                               no such transaction
--   {'FENCED', attempt, processingState}        the caller no longer owns the transaction; nothing written
--   {'CANCELLED'}                               its owner asked to cancel it: nothing written; the caller
--                                               completes it cancelled instead of running the next step
--   {'PAUSED'}                                  it is paused (pause.lua): the step's result is kept as for OK, and
--                                               it leaves the node (slot freed) parked, queued for resume.lua
--   {'MIGRATED'}                                it was marked to move to another version (migrate.lua): its next
--                                               step, mapped, is its new version's; it leaves the node (slot freed)
--                                               queued again (or parked, if paused too)
-- #include publish
-- #include codes
-- #include fence
-- #include queue
-- #include migrate

local key, processingKey = KEYS[1], KEYS[2]
local attempt, nextStep, nextInput, now, stepTime = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local txId, inflightPrefix = ARGV[6], ARGV[7]
local inPrefix, ringPrefix, maxKept = ARGV[8], ARGV[9], tonumber(ARGV[10]) or 20
local s = redis.call('HMGET', key, 'attempt', 'processingState', 'cancelRequested', 'paused', 'node', 'migrateTo')
if not s[1] then
  return {CODE.NOT_FOUND}
end
local refused = fence_refusal(s[1], s[2], s[3], attempt)
if refused then
  return refused
end
redis.call('HSET', key, 'step', nextStep, 'data', nextInput, 'updated', now)
if stepTime and stepTime ~= '' then
  redis.call('HSET', key, 'stepTimes', (redis.call('HGET', key, 'stepTimes') or '') .. stepTime .. ';')
end
-- a child's result stood for the step just passed; it must not stand for a later one
-- and the next step starts its own attempts
redis.call('HDEL', key, 'childStatus', 'childOutput', 'childNote', 'waitingFor', 'stepRetry', 'waitingSwitch',
  'stepAttempt', 'retry')
local migrated = s[6] and processingKey and migrate_at_boundary(key, s[6], tonumber(nextStep), now, maxKept)
if migrated and not s[4] then
  -- its next step is another version's: off this node, which runs the old one, and queued for whoever takes it
  redis.call('HSET', key, 'processingState', 'queued')
  queue_leave_node(key, processingKey, inflightPrefix .. (s[5] or ''), txId)
  local q = redis.call('HMGET', key, 'group', 'qBoost')
  queue_push_in(inPrefix .. q[1], ringPrefix .. q[1], txId, now, q[2])
  return {CODE.MIGRATED}
end
if s[4] and processingKey then
  -- paused: the next step waits, off this node and its slot, until resume.lua queues it
  redis.call('HSET', key, 'processingState', 'queued', 'pausedQueue', 'in')
  queue_leave_node(key, processingKey, inflightPrefix .. (s[5] or ''), txId)
  return {CODE.PAUSED}
end
return {CODE.OK}
