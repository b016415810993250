-- data-key-rewrap: replace an owner's wrapped data key with the same key wrapped under another master key (master
-- key rotation), unless it changed meanwhile (a shred, or another node's re-wrap): the compare and the write are
-- one step, so a re-wrap never brings back a shredded key.
-- KEYS[1] dataKeysH (field k:<owner>: version:masterId:base64; see data-key-put.lua)
-- ARGV[1] the owner   ARGV[2] the record the caller unwrapped   ARGV[3] the record to put in its place
-- Replies: 1 replaced, 0 the record is no longer ARGV[2] (nothing written)

local dataKeys = KEYS[1]
local owner, was, now = ARGV[1], ARGV[2], ARGV[3]
if redis.call('HGET', dataKeys, 'k:' .. owner) ~= was then
  return 0
end
redis.call('HSET', dataKeys, 'k:' .. owner, now)
return 1
