-- cancel: end an owner's transaction as cancelled; at once when it waits, at its next step boundary when running.
-- KEYS[1] stateH:<txId>   KEYS[2] toArchiveZ   KEYS[3] notify (channel)   KEYS[4] sleepingZ
-- KEYS[5] webhookH:<txId>   KEYS[6] webhooksZ   KEYS[7..9] stats1H, stats2H, stats3H of the slots that hold now
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] now (ms)   ARGV[4] archive delay (ms)
-- Replies:
--   {'CANCELLED'}             it was queued or sleeping: now complete with status cancelled, notified,
--                             scheduled for archiving (a queue entry left behind is dropped by dequeue)
--   {'CANCEL_REQUESTED'}      it is running: the node running it ends it cancelled at its next checkpoint
--   {'ALREADY_FINAL', status} it had ended already; nothing written
--   {'NOT_FOUND'}             no such transaction, or another owner's: nothing written
-- #include codes
-- #include webhooks
-- #include stats

local s = redis.call('HMGET', KEYS[1], 'processingState', 'status', 'owner', 'group', 'type')
if not s[1] or s[3] ~= ARGV[2] then
  return {CODE.NOT_FOUND}
end
if s[1] == 'complete' then
  return {CODE.ALREADY_FINAL, s[2]}
end
local now = ARGV[3]
if s[1] == 'processing' then
  redis.call('HSET', KEYS[1], 'cancelRequested', '1', 'updated', now)
  return {CODE.CANCEL_REQUESTED}
end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'processingState', 'complete', 'note', 'cancelled by its owner',
  'completed', now, 'updated', now)
redis.call('HDEL', KEYS[1], 'data', 'waitingFor')
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[2], tonumber(now) + tonumber(ARGV[4]), ARGV[1])
redis.call('PUBLISH', KEYS[3], 'completed:' .. ARGV[1] .. ':cancelled:' .. s[3])
webhooks_schedule(KEYS[1], KEYS[5], KEYS[6], KEYS[3], ARGV[1], now)
local counts = {}
stats_tally(counts, 'completed', s[4], s[5], s[3])
stats_tally(counts, 'completed.cancelled', s[4], s[5], s[3])
stats_write({KEYS[7], KEYS[8], KEYS[9]}, now, counts)
return {CODE.CANCELLED}
