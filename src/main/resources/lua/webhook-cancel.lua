-- webhook-cancel: a client got a transaction's outcome as a long-poll reply and asked (metadata
-- pollReplyCancelsWebhook) that this cancel the completion webhook: end its delivery as cancelled, unless
-- an attempt has started already (then the webhook goes out too: the client hears twice, never not at all).
-- KEYS[1] webhookH:<txId>   KEYS[2] webhooksZ   KEYS[3] stateH:<txId>
-- ARGV[1] txId   ARGV[2] now (ms)
-- Replies: {'CANCELLED'}, {'TOO_LATE'} (an attempt is under way or was made), {'NOT_PENDING'} (no delivery
--   waits: none was asked for, or it has ended)
-- The ended state goes into the transaction's stateH field webhook (raising rev), as webhook.lua does.
-- #include codes

local w = redis.call('HMGET', KEYS[1], 'status', 'attempts', 'handedAt', 'url', 'sync')
if w[1] ~= 'pending' or w[5] == '1' then
  return {CODE.NOT_PENDING}
end
if w[3] or tonumber(w[2]) > 0 then
  return {CODE.TOO_LATE}
end
local state = cjson.encode({url = w[4], status = 'cancelled', attempts = 0})
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('HSET', KEYS[3], 'webhook', state)
  redis.call('HINCRBY', KEYS[3], 'rev', 1)
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'status', 'cancelled', 'sync', '1', 'state', state)
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
end
return {CODE.CANCELLED}
