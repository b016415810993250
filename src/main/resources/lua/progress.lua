-- progress: a running step reports progress; the report becomes the summary's progressReport, and, for a
-- transaction with a webhook whose metadata asked for progressReports, a progress webhook is scheduled.
-- KEYS[1] stateH:<txId>   KEYS[2] webhooksZ   KEYS[3] notify (channel)
-- ARGV[1] txId   ARGV[2] attempt the node was given   ARGV[3] report JSON   ARGV[4] now (ms)
-- ARGV[5] the webhookH key prefix (Keys.webhookH("")): a progress webhook's id, <txId>-p<n>, is known only
--   once n is counted here, so its key is the prefix and the id
-- Replies: {'OK', webhookId or ''}, {'NOT_FOUND'}, or {'FENCED'} (the caller no longer owns it; nothing written)
-- A progress webhook's id is <txId>-p<n> (n counts the transaction's progress webhooks); its event holds
-- the report as it was, so every attempt sends the same one.
-- #include publish
-- #include codes
-- #include fence

local key, webhooksKey, notifyKey = KEYS[1], KEYS[2], KEYS[3]
local txId, attempt, report, now, webhookPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local s = redis.call('HMGET', key, 'attempt', 'processingState', 'webhookUrl', 'webhookUrlHash',
  'webhookProgress', 'owner')
if not s[1] then
  return {CODE.NOT_FOUND}
end
if not fence_holds(s[1], s[2], attempt) then
  return {CODE.FENCED}
end
redis.call('HSET', key, 'progress', report, 'updated', now)
if not s[3] or s[3] == '' or s[5] ~= '1' then
  return {CODE.OK, ''}
end
local id = txId .. '-p' .. redis.call('HINCRBY', key, 'progressSeq', 1)
redis.call('HSET', webhookPrefix .. id, 'txId', txId, 'owner', s[6], 'url', s[3], 'urlHash', s[4],
  'event', 'progress', 'eventTime', now, 'report', report, 'status', 'pending', 'attempts', 0)
redis.call('ZADD', webhooksKey, now, id)
publish(notifyKey, 'webhook:' .. id)
return {CODE.OK, id}
