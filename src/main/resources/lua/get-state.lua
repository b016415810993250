-- get-state: read the fields of a transaction that make its summary.
-- KEYS[1] stateH:<txId>   KEYS[2] webhookH:<txId> (its completion webhook, while delivery goes on)
-- ARGV: none
-- Replies: {} when there is no such transaction, else
--   {owner, externalId, type, version, status, processingState, attempt, created, updated, completed,
--    output, note, progress, metadata, step, webhookUrl, webhook, retry, errors, runs, compensation, startAt, gate,
--    paused, then of webhookH: status, attempts,
--    lastError, lastCode, nextAttempt, lastAttempt}
-- (nil entries come back as false; the caller maps them to absent fields)
-- #include summary

local stateKey, webhookKey = KEYS[1], KEYS[2]

if redis.call('EXISTS', stateKey) == 0 then
  return {}
end
local r = redis.call('HMGET', stateKey, unpack(STATE_FIELDS))
local w = redis.call('HMGET', webhookKey, 'status', 'attempts', 'lastError', 'lastCode', 'nextAttempt', 'lastAttempt')
for i = 1, #w do
  r[#r + 1] = w[i]
end
return r
