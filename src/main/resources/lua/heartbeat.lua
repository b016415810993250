-- heartbeat: a node says it is alive, or registers (at start, and again after it was taken over).
-- KEYS[1] node:<nodeId>:heartbeat   KEYS[2] nodesZ
-- ARGV[1] nodeId   ARGV[2] node info JSON   ARGV[3] TTL (ms)   ARGV[4] now (ms)
-- ARGV[5] 'register' (the node starts, or starts over) or 'beat' (it believes it is registered)
-- ARGV[6], ARGV[7] what comes before and after the nodeId in a heartbeat key (Keys): the other nodes are
--   known only once nodesZ is read
-- Replies: {code, then nodeId, info JSON of every registered node whose heartbeat lives} (the view the
-- node's leader roles share their partitions by), or just the code when FENCED; code:
--   OK      the heartbeat is written (and, for register, the node is in nodesZ)
--   LATE    written, but the last heartbeat had expired: the node was silent past its TTL (a pause or a
--           Redis outage); nobody took it over, so its work is still its own
--   FENCED  beat only: the node is no longer in nodesZ, so the reaper took its work over. Nothing is
--           written: the node must drop what it runs and register again before it takes work
-- #include codes

local heartbeatKey, nodesKey = KEYS[1], KEYS[2]
local nodeId, nodeInfo, ttl, now, mode, heartbeatPrefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local heartbeatSuffix = ARGV[7]

if mode == 'beat' and not redis.call('ZSCORE', nodesKey, nodeId) then
  return CODE.FENCED
end
local late = mode == 'beat' and redis.call('EXISTS', heartbeatKey) == 0
redis.call('SET', heartbeatKey, nodeInfo, 'PX', ttl)
redis.call('ZADD', nodesKey, 'NX', now, nodeId)
local out = {late and CODE.LATE or CODE.OK}
for _, node in ipairs(redis.call('ZRANGE', nodesKey, 0, -1)) do
  local info = redis.call('GET', heartbeatPrefix .. node .. heartbeatSuffix)
  if info then
    out[#out + 1] = node
    out[#out + 1] = info
  end
end
return out
