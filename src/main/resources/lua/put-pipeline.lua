-- put-pipeline: publish a pipeline definition; every version stays readable for transactions started on it.
-- The newest publication wins: one not newer than the current version's (a node starting with a pipeline file
-- last changed before a version an admin uploaded) stores its definition but leaves the current version.
-- KEYS[1] pipelineH:<name>   KEYS[2] pipelineVersionsH:<name>   KEYS[3] pipelinesS (every pipeline's name)
-- ARGV[1] version (hash of the definition)   ARGV[2] node group   ARGV[3] '1' if a transaction type, else '0'
-- ARGV[4] definition JSON   ARGV[5] now (ms)   ARGV[6] name   ARGV[7] its onFailure pipeline or ''
-- ARGV[8] when this publication was made (ms): an upload's time, or the pipeline file's last change
-- ARGV[9] its default priority (0-9) for starts that name none
-- ARGV[10] its rate limit in transactions per second (dequeue.lua holds back what exceeds it), or '' for none
-- ARGV[11] its maxConcurrency (how many may run at once; dequeue.lua holds back the rest), or '' for none
-- Replies:
--   {'OK', 1}            the current version changed
--   {'OK', 0}            the same version was current already
--   {'KEPT', version}    a newer publication is current (its version); nothing else changed
-- #include codes

redis.call('SADD', KEYS[3], ARGV[6])
local current = redis.call('HMGET', KEYS[1], 'version', 'publishedAt')
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[4])
if current[1] == ARGV[1] then
  return {CODE.OK, 0}
end
if current[1] and tonumber(current[2] or '0') >= tonumber(ARGV[8]) then
  return {CODE.KEPT, current[1]}
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'nodeGroup', ARGV[2], 'isTransactionType', ARGV[3],
  'definition', ARGV[4], 'updated', ARGV[5], 'onFailure', ARGV[7], 'publishedAt', ARGV[8], 'priority', ARGV[9],
  'rate', ARGV[10], 'cap', ARGV[11])
return {CODE.OK, 1}
