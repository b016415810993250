-- pipeline-state: disable a pipeline (new starts are refused; what runs finishes) or enable it again.
-- KEYS[1] pipelineH:<name> (the cluster-wide one; PipelineStore.copy then copies the flag into each partition)
-- ARGV[1] '1' to disable, '0' to enable   ARGV[2] now (ms)
-- Replies: 1 done, 0 no such pipeline (nothing written)

local pipelineKey = KEYS[1]
local disabled, now = ARGV[1], ARGV[2]

if redis.call('EXISTS', pipelineKey) == 0 then
  return 0
end
-- updated moves on, so the partition copies (which never go back in time) take the change
redis.call('HSET', pipelineKey, 'disabled', disabled, 'updated', now)
return 1
