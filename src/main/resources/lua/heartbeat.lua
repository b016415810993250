-- heartbeat: a node says it is alive, or registers (at start, and again after it was taken over).
-- KEYS[1] node:<nodeId>:heartbeat   KEYS[2] nodesZ
-- ARGV[1] nodeId   ARGV[2] node info JSON   ARGV[3] TTL (ms)   ARGV[4] now (ms)
-- ARGV[5] 'register' (the node starts, or starts over) or 'beat' (it believes it is registered)
-- Replies:
--   OK      the heartbeat is written (and, for register, the node is in nodesZ)
--   LATE    written, but the last heartbeat had expired: the node was silent past its TTL (a pause or a
--           Redis outage); nobody took it over, so its work is still its own
--   FENCED  beat only: the node is no longer in nodesZ, so the reaper took its work over. Nothing is
--           written: the node must drop what it runs and register again before it takes work
-- #include codes

if ARGV[5] == 'beat' and not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return CODE.FENCED
end
local late = ARGV[5] == 'beat' and redis.call('EXISTS', KEYS[1]) == 0
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], 'NX', ARGV[4], ARGV[1])
return late and CODE.LATE or CODE.OK
