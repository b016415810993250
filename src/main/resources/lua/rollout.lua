-- rollout: end a pipeline's rollout (lib/rollout.lua). promote: the canary takes every start; rollback: the stable
-- version is current again, as it was before the canary's upload, and takes every start. Either way a transaction
-- keeps the version it started on, and pipelineH keeps rollout (promoted or rolledback), canary and rolloutAt for
-- GET .../rollout. updated (and publishedAt, on a rollback) move to now: the partition copies take the change, and a
-- pipeline file last changed before now does not publish the canary again.
-- KEYS[1] pipelineH:<name> (the cluster-wide one; PipelineStore.copy then copies it into each partition)
-- ARGV[1] 'promote' or 'rollback'   ARGV[2] now (ms)
-- Replies:
--   {'OK', version}          done: the version every start now runs on
--   {'NOT_FOUND', ''}        no such pipeline
--   {'NO_ROLLOUT', state}    it has no rollout under way (state: its last one's, promoted or rolledback, or '')
-- #include codes

local key = KEYS[1]
local action, now = ARGV[1], ARGV[2]

local p = redis.call('HMGET', key, 'version', 'stable', 'stableFields', 'rollout')
if not p[1] then
  return {CODE.NOT_FOUND, ''}
end
if not p[2] then
  return {CODE.NO_ROLLOUT, p[4] or ''}
end
local canary = p[1]
if action == 'rollback' then
  local was = cjson.decode(p[3])
  redis.call('HSET', key, 'version', was.version, 'nodeGroup', was.nodeGroup, 'isTransactionType',
    was.isTransactionType, 'definition', was.definition, 'onFailure', was.onFailure, 'publishedAt', now,
    'priority', was.priority, 'rate', was.rate, 'cap', was.cap, 'gate', was.gate)
end
redis.call('HDEL', key, 'stable', 'share', 'stableOnFailure', 'stableFields')
redis.call('HSET', key, 'rollout', action == 'rollback' and 'rolledback' or 'promoted', 'canary', canary,
  'rolloutAt', now, 'updated', now)
return {CODE.OK, action == 'rollback' and p[2] or canary}
