-- data-key-put: record an owner's new data key (wrapped under a master key) unless the owner has one: the first
-- node to make an owner's key wins, and every other node takes that one. Versions only grow: a shred deletes the
-- wrapped key and keeps its version, so the next key has the next version and never opens what the shredded one
-- sealed.
-- KEYS[1] dataKeysH (fields v:<owner>: the owner's last version; k:<owner>: version:masterId:base64 of the wrapped key)
-- ARGV[1] the owner   ARGV[2] the version the caller wrapped its key for (the last version + 1, as it read it)
-- ARGV[3] the wrapped key, masterId:base64 (the caller bound it to the owner and ARGV[2])
-- Replies: {version, record}: the owner's key now (the caller's, or the one another node stored first; record is
--   version:masterId:base64), or {last version, ''} when the last version is not ARGV[2] - 1 (a shred came
--   between): the caller wraps again for the next version

local dataKeys = KEYS[1]
local owner, version, wrapped = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local existing = redis.call('HGET', dataKeys, 'k:' .. owner)
local last = tonumber(redis.call('HGET', dataKeys, 'v:' .. owner) or '0')
if existing then
  return {last, existing}
end
if last + 1 ~= version then
  return {last, ''}
end
local record = version .. ':' .. wrapped
redis.call('HSET', dataKeys, 'v:' .. owner, version, 'k:' .. owner, record)
return {version, record}
