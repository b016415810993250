-- pipeline-copy: with several partitions, what start and hop read of a pipeline (its current version, group
-- whether it is a transaction type, its onFailure pipeline and default priority) is copied into each partition, so they read it in their own slot.
-- A copy never goes back in time: one made from an older publication than the copy held is not written.
-- KEYS[1] pipelineH:<name> of the partition
-- ARGV[1] version   ARGV[2] node group   ARGV[3] '1' if a transaction type, else '0'
-- ARGV[4] when the copied version was published (ms; the global pipelineH's updated)   ARGV[5] onFailure or ''
-- ARGV[6] '1' when the pipeline is disabled (start refuses it), else '0'
-- ARGV[7] its default priority (0-9)   ARGV[8] its rate limit per second, or ''   ARGV[9] its maxConcurrency or ''
-- Replies: 1 written, 0 the partition holds a newer publication

local at = redis.call('HGET', KEYS[1], 'updated')
if at and tonumber(at) > tonumber(ARGV[4]) then
  return 0
end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'nodeGroup', ARGV[2], 'isTransactionType', ARGV[3],
  'updated', ARGV[4], 'onFailure', ARGV[5], 'disabled', ARGV[6], 'priority', ARGV[7],
  'rate', ARGV[8], 'cap', ARGV[9])
return 1
