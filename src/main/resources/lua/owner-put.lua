-- owner-put: set an owner's limits (the admin API), in the cluster-wide record or in one partition's copy, where
-- start (the weight: lib/queue.lua queue_share) and dequeue (cap and rate) read them in their own slot.
-- A write never goes back in time: one made from an older setting than the hash holds is not written, so
-- copies made in any order end as the newest setting.
-- KEYS[1] ownerH:<owner> (cluster-wide, or a partition's copy)   KEYS[2] ownersS (with the record; the owner is
--   named there while it has a limit), or KEYS[1] again for a copy
-- ARGV[1] when the setting was made (ms)   ARGV[2] weight or ''   ARGV[3] maxConcurrency or ''
-- ARGV[4] rate per second or ''   ARGV[5] the owner   ARGV[6] the rate as given ("100/s") or ''
--   ('' in ARGV[2..4]: that limit is not set)
-- Replies: 1 written, 0 the hash holds a newer setting

local at = redis.call('HGET', KEYS[1], 'updated')
if at and tonumber(at) > tonumber(ARGV[1]) then
  return 0
end
local names = {'weight', 'cap', 'rate'}
local set = false
for i, name in ipairs(names) do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], name)
  else
    redis.call('HSET', KEYS[1], name, ARGV[i + 1])
    set = true
  end
end
if ARGV[6] == '' then
  redis.call('HDEL', KEYS[1], 'rateLimit')
else
  redis.call('HSET', KEYS[1], 'rateLimit', ARGV[6])
end
-- the stamp stays when every limit goes, so an older copy arriving later cannot bring one back
redis.call('HSET', KEYS[1], 'updated', ARGV[1])
if KEYS[2] ~= KEYS[1] then
  if set then
    redis.call('SADD', KEYS[2], ARGV[5])
  else
    redis.call('SREM', KEYS[2], ARGV[5])
  end
end
return 1
