-- cancel: end an owner's transaction as cancelled; at once when it waits, at its next step boundary when running.
-- KEYS[1] stateH:<txId>   KEYS[2] toArchiveZ   KEYS[3] notify (channel)   KEYS[4] sleepingZ
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] now (ms)   ARGV[4] archive delay (ms)   ARGV[5] key prefix
--   (webhookH:<txId> and webhooksZ, for a transaction with a webhook, are built from it)
-- Replies:
--   {'CANCELLED'}             it was queued or sleeping: now complete with status cancelled, notified,
--                             scheduled for archiving (a queue entry left behind is dropped by dequeue)
--   {'CANCEL_REQUESTED'}      it is running: the node running it ends it cancelled at its next checkpoint
--   {'ALREADY_FINAL', status} it had ended already; nothing written
--   {'NOT_FOUND'}             no such transaction, or another owner's: nothing written

-- #include webhooks

-- #include stats

local s = redis.call('HMGET', KEYS[1], 'processingState', 'status', 'owner', 'group', 'type')
if not s[1] or s[3] ~= ARGV[2] then
  return {'NOT_FOUND'}
end
if s[1] == 'complete' then
  return {'ALREADY_FINAL', s[2]}
end
local now = ARGV[3]
if s[1] == 'processing' then
  redis.call('HSET', KEYS[1], 'cancelRequested', '1', 'updated', now)
  return {'CANCEL_REQUESTED'}
end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'processingState', 'complete', 'note', 'cancelled by its owner',
  'completed', now, 'updated', now)
redis.call('HDEL', KEYS[1], 'data', 'waitingFor')
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[2], tonumber(now) + tonumber(ARGV[4]), ARGV[1])
redis.call('PUBLISH', KEYS[3], 'completed:' .. ARGV[1] .. ':cancelled:' .. s[3])
scheduleWebhook(ARGV[5], KEYS[1], ARGV[1], now, KEYS[3])
local counts = {}
stats_tally(counts, 'completed', s[4], s[5], s[3])
stats_tally(counts, 'completed.cancelled', s[4], s[5], s[3])
stats_write(ARGV[5], now, counts)
return {'CANCELLED'}
