-- owner-put: set an owner's limits (the admin API), in the cluster-wide record or in one partition's copy, where
-- start (the weight: lib/queue.lua queue_share) and dequeue (cap and rate) read them in their own slot.
-- A write never goes back in time: one made from an older setting than the hash holds is not written, so
-- copies made in any order end as the newest setting.
-- KEYS[1] ownerH:<owner> (cluster-wide, or a partition's copy)   KEYS[2] ownersS (with the record; the owner is
--   named there while it has a limit), or KEYS[1] again for a copy
-- ARGV[1] when the setting was made (ms)   ARGV[2] weight or ''   ARGV[3] maxConcurrency or ''
-- ARGV[4] rate per second or ''   ARGV[5] the owner   ARGV[6] the rate as given ("100/s") or ''
-- ARGV[7] maxLive or ''   ARGV[8] maxPayloadBytes or ''   (start.lua and the runner's output check read them)
--   ('' in ARGV[2..4], ARGV[7..8]: that limit is not set)
-- Replies: 1 written, 0 the hash holds a newer setting

local key, listKey = KEYS[1], KEYS[2]
local when, weight, cap, rate, owner, rateAsGiven, maxLive, maxPayloadBytes = ARGV[1], ARGV[2], ARGV[3], ARGV[4],
  ARGV[5], ARGV[6], ARGV[7] or '', ARGV[8] or ''
local at = redis.call('HGET', key, 'updated')
if at and tonumber(at) > tonumber(when) then
  return 0
end
local values = {weight = weight, cap = cap, rate = rate, maxLive = maxLive, maxPayloadBytes = maxPayloadBytes}
local set = false
for _, name in ipairs({'weight', 'cap', 'rate', 'maxLive', 'maxPayloadBytes'}) do
  if values[name] == '' then
    redis.call('HDEL', key, name)
  else
    redis.call('HSET', key, name, values[name])
    set = true
  end
end
if rateAsGiven == '' then
  redis.call('HDEL', key, 'rateLimit')
else
  redis.call('HSET', key, 'rateLimit', rateAsGiven)
end
-- the stamp stays when every limit goes, so an older copy arriving later cannot bring one back
redis.call('HSET', key, 'updated', when)
if listKey ~= key then
  if set then
    redis.call('SADD', listKey, owner)
  else
    redis.call('SREM', listKey, owner)
  end
end
return 1
