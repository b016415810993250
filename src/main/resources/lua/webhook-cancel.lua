-- webhook-cancel: a client got a transaction's outcome as a long-poll reply and asked (metadata
-- pollReplyCancelsWebhook) that this cancel the completion webhook: end its delivery as cancelled, unless
-- an attempt has started already (then the webhook goes out too: the client hears twice, never not at all).
-- KEYS[1] webhookH:<txId>   KEYS[2] webhooksZ   KEYS[3] stateH:<txId>
-- ARGV[1] txId   ARGV[2] now (ms)
-- Replies: {'CANCELLED'}, {'TOO_LATE'} (an attempt is under way or was made), {'NOT_PENDING'} (no delivery
--   waits: none was asked for, or it has ended)
-- The ended state goes into the transaction's stateH field webhook (raising rev), as webhook.lua does.
-- #include codes

local webhookKey, webhooksKey, stateKey = KEYS[1], KEYS[2], KEYS[3]
local txId, now = ARGV[1], ARGV[2]

local w = redis.call('HMGET', webhookKey, 'status', 'attempts', 'handedAt', 'url', 'sync')
if w[1] ~= 'pending' or w[5] == '1' then
  return {CODE.NOT_PENDING}
end
if w[3] or tonumber(w[2]) > 0 then
  return {CODE.TOO_LATE}
end
local state = cjson.encode({url = w[4], status = 'cancelled', attempts = 0})
redis.call('ZREM', webhooksKey, txId)
if redis.call('EXISTS', stateKey) == 1 then
  redis.call('HSET', stateKey, 'webhook', state)
  redis.call('HINCRBY', stateKey, 'rev', 1)
  redis.call('DEL', webhookKey)
else
  redis.call('HSET', webhookKey, 'status', 'cancelled', 'sync', '1', 'state', state)
  redis.call('ZADD', webhooksKey, now, txId)
end
return {CODE.CANCELLED}
