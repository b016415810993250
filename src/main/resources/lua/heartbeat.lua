-- heartbeat: a node says it is alive (and registers, the first time).
-- KEYS[1] node:<nodeId>:heartbeat   KEYS[2] nodesZ
-- ARGV[1] nodeId   ARGV[2] node info JSON   ARGV[3] TTL (ms)   ARGV[4] now (ms)
-- Replies: 1 (always)

redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], 'NX', ARGV[4], ARGV[1])
return 1
