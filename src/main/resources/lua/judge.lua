-- judge: find the nodes whose heartbeat key has expired (by Redis's own expiry): Redis is the one judge of
-- liveness, and a Hazelcast member-left event only makes the reaper look sooner. A dead node leaves nodesZ
-- (so its next heartbeat is answered FENCED) and waits in deadZ until reap.lua has taken its work over in
-- every partition; the reaper then removes it from deadZ. A reaper that dies in between leaves it there for
-- the next one.
-- KEYS[1] nodesZ   KEYS[2] deadZ
-- ARGV[1] now (ms)   ARGV[2], ARGV[3] what comes before and after the nodeId in a heartbeat key (from Keys):
--   the nodes are known only once nodesZ is read, so their heartbeat keys are built from these parts
-- ARGV[4] '1' to judge heartbeats, '0' to judge nobody: the caller grants a grace period (Redis has just
--   come back after an outage longer than a heartbeat's TTL, and the live nodes have not beaten yet)
-- Replies: {dead nodes (all of deadZ, oldest first), live nodes (all of nodesZ)}

local nodesKey, deadKey = KEYS[1], KEYS[2]
local now, heartbeatPrefix, heartbeatSuffix, judging = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if judging == '1' then
  for _, node in ipairs(redis.call('ZRANGE', nodesKey, 0, -1)) do
    if redis.call('EXISTS', heartbeatPrefix .. node .. heartbeatSuffix) == 0 then
      redis.call('ZREM', nodesKey, node)
      redis.call('ZADD', deadKey, 'NX', now, node)
    end
  end
end
return {redis.call('ZRANGE', deadKey, 0, -1), redis.call('ZRANGE', nodesKey, 0, -1)}
