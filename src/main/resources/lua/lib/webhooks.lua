-- webhooks (included by complete.lua and cancel.lua): a transaction with a webhook URL gets a delivery
-- for its completion: webhookH:<txId> (the event, its delivery state) and webhooksZ (txId → first
-- attempt: now, or later by webhookDelay when the client asked that a long-poll reply may cancel it),
-- and a 'webhook:<txId>' note on notify wakes the webhook leader.
-- known: the state's webhookUrl, webhookUrlHash, webhookDelay, owner and trace when the caller has read them
-- already (nil: read here).
local function webhooks_schedule(stateKey, webhookKey, webhooksKey, notifyKey, id, now, known)
  local w = known or redis.call('HMGET', stateKey, 'webhookUrl', 'webhookUrlHash', 'webhookDelay', 'owner', 'trace')
  if not w[1] or w[1] == '' then
    return
  end
  redis.call('HSET', webhookKey, 'txId', id, 'owner', w[4], 'url', w[1], 'urlHash', w[2],
    'event', 'complete', 'eventTime', now, 'status', 'pending', 'attempts', 0)
  if w[5] then
    redis.call('HSET', webhookKey, 'trace', w[5]) -- the delivery's span hangs under the transaction's start
  end
  redis.call('ZADD', webhooksKey, tonumber(now) + tonumber(w[3] or 0), id)
  publish(notifyKey, 'webhook:' .. id)
end
