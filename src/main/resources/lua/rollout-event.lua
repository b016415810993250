-- rollout-event: logs a pipeline-rollout event (a canary published, promoted or rolled back) on partition 0's eventsL.
-- A rollout's keys are global (pipelineH), so put-pipeline.lua and rollout.lua cannot reach an eventsL in their slot:
-- the node logs it right after them (redis/Rollouts); a node lost in between leaves the change without its event.
-- KEYS[1] eventsL of partition 0
-- ARGV[1] now (ms)   ARGV[2] the pipeline's name
-- ARGV[3] details JSON: {pipeline, action (canary, promote or rollback), version (what new starts run on, the canary
--   during a rollout), stable and share (canary), canary (promote, rollback)}
-- Replies: 1
-- #include events

local eventsKey = KEYS[1]
local now, name, details = ARGV[1], ARGV[2], ARGV[3]
event_log(eventsKey, 'pipeline-rollout', now, '', name, cjson.decode(details))
return 1
