-- retry: a step failed and its retry policy allows another attempt: the transaction leaves its worker and
-- sleeps until the attempt is due (the reaper's wake queues it); the same step then runs with its
-- stepAttempt raised. Every failed attempt's error is kept in 'errors' (a JSON array) for the history.
-- KEYS[1] stateH:<txId>   KEYS[2] sleepingZ   KEYS[3] processingZ   KEYS[4] inflightZ:<nodeId>
-- KEYS[5] phaseZ:retrying (a search index: the transaction is added, by created)
-- ARGV[1] txId   ARGV[2] attempt the node was given   ARGV[3] when the next attempt is due (ms)
-- ARGV[4] the next attempt's number   ARGV[5] the retry view JSON (step, attempt, maxAttempts, nextAttemptAt, lastError)
-- ARGV[6] the failed attempt's error JSON (appended to errors)   ARGV[7] now (ms)
-- ARGV[8] the attempt's time, "step:startMs:durationMs:node", or '' (appended to stepTimes)
-- ARGV[9] limits.maxErrors: errors keeps at most this many entries, the oldest folded into one (lib/errors.lua)
-- Replies:
--   {'SLEEPING'}                            in sleepingZ until the next attempt is due
--   {'FENCED', attempt, processingState}    the caller no longer owns it; nothing written
--   {'CANCELLED'}                           its owner asked to cancel it: nothing written; the caller
--                                           completes it cancelled instead of retrying
-- #include codes
-- #include fence
-- #include publish
-- #include queue
-- #include errors

local key, sleepingKey, processingKey, inflightKey, retryingKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, attempt, dueAt, nextAttempt, retryJson = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local errorJson, now, stepTime, maxErrors = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local s = redis.call('HMGET', key, 'attempt', 'processingState', 'cancelRequested', 'errors', 'created')
local refused = fence_refusal(s[1], s[2], s[3], attempt)
if refused then
  return refused
end
queue_leave_node(key, processingKey, inflightKey, id)
-- appended as text: the history is only ever read whole, by a client
local errors = errors_append(s[4], errorJson, tonumber(maxErrors) or 20)
redis.call('HSET', key, 'processingState', 'sleeping', 'waitingSwitch', '', 'stepAttempt', nextAttempt,
  'retry', retryJson, 'errors', errors, 'updated', now)
if stepTime ~= '' then
  redis.call('HSET', key, 'stepTimes', (redis.call('HGET', key, 'stepTimes') or '') .. stepTime .. ';')
end
redis.call('ZADD', sleepingKey, dueAt, id)
if s[5] then
  redis.call('ZADD', retryingKey, s[5], id)
end
return {CODE.SLEEPING}
