-- sleep: a running transaction leaves its worker until a time, or until a named switch changes (with the
-- time as a fallback); the same step runs again when it wakes, with its retry counter raised.
-- KEYS[1] stateH:<txId>   KEYS[2] sleepingZ   KEYS[3] processingZ   KEYS[4] inflightZ:<nodeId>
-- KEYS[5] qInZ:<group>    KEYS[6] qRingL:<group>   (used when a switch changed already: see below)
-- KEYS[7] phaseZ:waiting, KEYS[8] phaseZ:retrying (search indexes: a transaction that waits for a switch is
--   added to the first by its created; one that sleeps in a step a retry runs again, to the second)
-- ARGV[1] txId   ARGV[2] attempt the node was given   ARGV[3] wake time (ms)   ARGV[4] switch name or ''
-- ARGV[5] now (ms)
-- Replies:
--   {'SLEEPING'}                            in sleepingZ until the wake time (or the switch changes)
--   {'REQUEUED'}                            the switch changed after the step last saw it: no sleep; the
--                                           transaction is queued at once to run the step again
--   {'FENCED', attempt, processingState}    the caller no longer owns it; nothing written
--   {'CANCELLED'}                           its owner asked to cancel it: nothing written; the caller
--                                           completes it cancelled instead of sleeping
-- Switches live in the field 'switches' as JSON {name: {value, seq}}; 'acks' holds {name: seq} as the
-- step last saw them (dequeue writes it). A seq above its ack is a change the step has not seen.
-- #include publish
-- #include codes
-- #include fence
-- #include queue

local key, sleepingKey, processingKey, inflightKey, inKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local ringKey, waitingKey, retryingKey = KEYS[6], KEYS[7], KEYS[8]
local id, attempt, wakeAt, name, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local s = redis.call('HMGET', key, 'attempt', 'processingState', 'switches', 'acks', 'cancelRequested', 'created',
  'retry')
local refused = fence_refusal(s[1], s[2], s[5], attempt)
if refused then
  return refused
end
queue_leave_node(key, processingKey, inflightKey, id)
redis.call('HINCRBY', key, 'stepRetry', 1)
if name ~= '' and s[3] then
  local switch = cjson.decode(s[3])[name]
  local acks = s[4] and cjson.decode(s[4]) or {}
  if switch and switch.seq > (acks[name] or 0) then
    redis.call('HSET', key, 'processingState', 'queued', 'updated', now)
    queue_push_in(inKey, ringKey, id, now, redis.call('HGET', key, 'qBoost'))
    return {CODE.REQUEUED}
  end
end
redis.call('HSET', key, 'processingState', 'sleeping', 'waitingSwitch', name, 'updated', now)
redis.call('ZADD', sleepingKey, wakeAt, id)
if s[6] and (name ~= '' or s[7]) then
  redis.call('ZADD', name ~= '' and waitingKey or retryingKey, s[6], id)
end
return {CODE.SLEEPING}
