-- memory: how full the Redis that holds a partition is (the memory guard's reading), and on a crossing of the
-- guard's marks the event that says so. Run by each node's memory watcher every redis.memoryCheckInterval.
-- KEYS[1] eventsL of the partition (it also routes the call to the partition's master in a Redis Cluster)
-- ARGV[1] now (ms)   ARGV[2] event kind: '' (none), 'redis-memory-high' or 'redis-memory-ok'
-- ARGV[3] nodeId (the node that saw the crossing)   ARGV[4] the event's details (JSON)
-- Replies: {used_memory, maxmemory} in bytes, from INFO memory (maxmemory 0: none set)
-- #include events

local eventsKey = KEYS[1]
local now, kind, node, details = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local info = redis.call('INFO', 'memory')
local used = tonumber(string.match(info, 'used_memory:(%d+)'))
local max = tonumber(string.match(info, 'maxmemory:(%d+)'))
if kind ~= '' then
  event_log(eventsKey, kind, now, node, '', cjson.decode(details))
end
return {used, max}
