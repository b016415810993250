-- put-pipeline: publish a pipeline definition; every version stays readable for transactions started on it.
-- The newest publication wins: one not newer than the current version's (a node starting with a pipeline file
-- last changed before a version an admin uploaded) stores its definition but leaves the current version.
-- KEYS[1] pipelineH:<name>   KEYS[2] pipelineVersionsH:<name> (version → definition, and at:<version> → when
--   that version was first published, ms: the console lists versions by it)   KEYS[3] pipelinesS (every pipeline's name)
-- ARGV[1] version (hash of the definition)   ARGV[2] node group   ARGV[3] '1' if a transaction type, else '0'
-- ARGV[4] definition JSON   ARGV[5] now (ms)   ARGV[6] name   ARGV[7] its onFailure pipeline or ''
-- ARGV[8] when this publication was made (ms): an upload's time, or the pipeline file's last change
-- ARGV[9] its default priority (0-9) for starts that name none
-- ARGV[10] its rate limit in transactions per second (dequeue.lua holds back what exceeds it), or '' for none
-- ARGV[11] its maxConcurrency (how many may run at once; dequeue.lua holds back the rest), or '' for none
-- ARGV[12] its gate ({"<debounce|throttle|singleton>": {...}} as Pipeline.gateText writes it) or '' (start.lua)
-- Replies:
--   {'OK', 1}            the current version changed
--   {'OK', 0}            the same version was current already
--   {'KEPT', version}    a newer publication is current (its version); nothing else changed
-- #include codes

local key, versionsKey, namesKey = KEYS[1], KEYS[2], KEYS[3]
local version, group, isType, definition, now, name = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local onFailure, published, priority, rate, cap, gate = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12] or ''

redis.call('SADD', namesKey, name)
local current = redis.call('HMGET', key, 'version', 'publishedAt')
redis.call('HSETNX', versionsKey, version, definition)
redis.call('HSETNX', versionsKey, 'at:' .. version, published)
if current[1] == version then
  return {CODE.OK, 0}
end
if current[1] and tonumber(current[2] or '0') >= tonumber(published) then
  return {CODE.KEPT, current[1]}
end
redis.call('HSET', key, 'version', version, 'nodeGroup', group, 'isTransactionType', isType,
  'definition', definition, 'updated', now, 'onFailure', onFailure, 'publishedAt', published, 'priority', priority,
  'rate', rate, 'cap', cap, 'gate', gate)
return {CODE.OK, 1}
