-- checkpoint: record that a step finished, so a recovered transaction resumes at the next step.
-- KEYS[1] stateH:<txId>
-- ARGV[1] attempt the node was given   ARGV[2] index of the next step   ARGV[3] next step's input JSON
-- ARGV[4] now (ms)   ARGV[5] the step just run, "step:startMs:durationMs:node:outputSize", or '' (appended to stepTimes)
-- Replies:
--   {'OK'}
--   {'NOT_FOUND'}                               no such transaction
--   {'FENCED', attempt, processingState}        the caller no longer owns the transaction; nothing written
--   {'CANCELLED'}                               its owner asked to cancel it: nothing written; the caller
--                                               completes it cancelled instead of running the next step
-- #include codes
-- #include fence

local key = KEYS[1]
local attempt, nextStep, nextInput, now, stepTime = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local s = redis.call('HMGET', key, 'attempt', 'processingState', 'cancelRequested')
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
return {CODE.OK}
