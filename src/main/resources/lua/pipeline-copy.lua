-- pipeline-copy: with several partitions, what start and hop read of a pipeline (its current version, group
-- whether it is a transaction type, its onFailure pipeline and default priority) is copied into each partition, so they read it in their own slot.
-- A copy never goes back in time: one made from an older publication than the copy held is not written.
-- KEYS[1] pipelineH:<name> of the partition
-- ARGV[1] version   ARGV[2] node group   ARGV[3] '1' if a transaction type, else '0'
-- ARGV[4] when the copied version was published (ms; the global pipelineH's updated)   ARGV[5] onFailure or ''
-- ARGV[6] '1' when the pipeline is disabled (start refuses it), else '0'
-- ARGV[7] its default priority (0-9)   ARGV[8] its rate limit per second, or ''   ARGV[9] its maxConcurrency or ''
-- ARGV[10] its gate (put-pipeline.lua) or ''
-- ARGV[11..13] its rollout's stable version, share and stableOnFailure (lib/rollout.lua), or '' when none
-- Replies: 1 written, 0 the partition holds a newer publication

local key = KEYS[1]
local version, group, isType, published, onFailure = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local disabled, priority, rate, cap, gate = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10] or ''
local stable, share, stableOnFailure = ARGV[11] or '', ARGV[12] or '', ARGV[13] or ''
local at = redis.call('HGET', key, 'updated')
if at and tonumber(at) > tonumber(published) then
  return 0
end
redis.call('HSET', key, 'version', version, 'nodeGroup', group, 'isTransactionType', isType,
  'updated', published, 'onFailure', onFailure, 'disabled', disabled, 'priority', priority,
  'rate', rate, 'cap', cap, 'gate', gate, 'stable', stable, 'share', share, 'stableOnFailure', stableOnFailure)
return 1
