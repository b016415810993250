-- put-pipeline: publish a pipeline definition; every version stays readable for transactions started on it.
-- KEYS[1] pipelineH:<name>   KEYS[2] pipelineVersionsH:<name>   KEYS[3] pipelinesS (every pipeline's name)
-- ARGV[1] version (hash of the definition)   ARGV[2] node group   ARGV[3] '1' if a transaction type, else '0'
-- ARGV[4] definition JSON   ARGV[5] now (ms)   ARGV[6] name
-- Replies:
--   {'OK', 1}   the current version changed
--   {'OK', 0}   the same version was current already

redis.call('SADD', KEYS[3], ARGV[6])
local current = redis.call('HGET', KEYS[1], 'version')
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[4])
if current == ARGV[1] then
  return {'OK', 0}
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'nodeGroup', ARGV[2], 'isTransactionType', ARGV[3],
  'definition', ARGV[4], 'updated', ARGV[5])
return {'OK', 1}
