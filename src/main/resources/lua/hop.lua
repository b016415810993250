-- hop: a running parent starts a child pipeline in the child's group and leaves its worker to wait for it.
-- KEYS[1] stateH:<parentTxId>   KEYS[2] stateH:<childTxId>   KEYS[3] pipelineH:<child pipeline>
-- KEYS[4] qInZ:<child group>    KEYS[5] qRingL:<child group>  (the group the caller expects; checked)
-- KEYS[6] processingZ           KEYS[7] inflightZ:<nodeId>
-- KEYS[8..10] stats1H, stats2H, stats3H of the slots that hold now (the child counts as queued)
-- KEYS[11] liveZ (the search index: the child is added)
-- KEYS[12] liveOwnersH (the child is live: lib/live.lua)
-- KEYS[13] phaseZ:waiting (a search index: the parent, now waiting for its child, is added by its created)
-- ARGV[1] parentTxId   ARGV[2] attempt the node was given   ARGV[3] index of the parent's child step
-- ARGV[4] childTxId    ARGV[5] child pipeline   ARGV[6] child input JSON   ARGV[7] now (ms)
-- ARGV[8] expected child group   ARGV[9] the child's trace (the traceparent of the step's span) or ''
-- ARGV[10] the partition's stateH key prefix (the root of the parent's tree is known only from its state)
-- ARGV[11] limits.maxDepth   ARGV[12] limits.maxDescendants
-- Replies:
--   {'OK', version}               the child is queued; the parent is sleeping, waitingFor the child
--   {'FENCED', attempt, state}    the caller no longer owns the parent; nothing written
--   {'CANCELLED'}                 its owner asked to cancel the parent: nothing written; the caller
--                                 completes it cancelled instead of starting the child
--   {'UNKNOWN_PIPELINE'}          no pipeline of that name; nothing written
--   {'GROUP_CHANGED', group}      the child pipeline belongs to another group: call again with its keys
--   {'DEPTH_EXCEEDED', depth, max}        the child would nest deeper than maxDepth; nothing written
--   {'DESCENDANTS_EXCEEDED', count, max}  the root's tree would hold more than maxDescendants; nothing written
-- The child carries parentTxId and parentGroup; complete.lua hands its result back to the parent. It also
-- carries root and depth (lib/child.lua), and its root's descendants count grows by one.
-- #include publish
-- #include codes
-- #include queue
-- #include stats
-- #include fence
-- #include child
-- #include live

local parentKey, childKey, pipelineKey, inKey, ringKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local processingKey, inflightKey, stats1, stats2, stats3 = KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local liveKey, liveOwnersKey, waitingKey = KEYS[11], KEYS[12], KEYS[13]
local parentId, attempt, stepIndex, child, pipeline = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local input, now, group, trace, statePrefix, maxDepth = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11]
local maxDescendants = ARGV[12]

local parent, refused = child_parent(parentKey, attempt)
if refused then
  return refused
end
local p = redis.call('HMGET', pipelineKey, 'version', 'nodeGroup', 'onFailure')
if not p[1] then
  return {CODE.UNKNOWN_PIPELINE}
end
if p[2] ~= group then
  return {CODE.GROUP_CHANGED, p[2]}
end
local tree
tree, refused = child_tree(parentId, parent, statePrefix, 1, tonumber(maxDepth), tonumber(maxDescendants))
if refused then
  return refused
end
redis.call('HSET', childKey,
  'owner', parent[3], 'externalId', '', 'type', pipeline, 'version', p[1], 'group', p[2],
  'status', 'running', 'processingState', 'queued', 'attempt', 0, 'step', 0,
  'created', now, 'updated', now, 'metadata', parent[4], 'input', input,
  'parentTxId', parentId, 'parentGroup', parent[5], 'priority', parent[7] or '0', 'qBoost', parent[8] or '0',
  'root', tree.root, 'depth', tree.depth)
child_count(tree)
if p[3] and p[3] ~= '' then
  redis.call('HSET', childKey, 'onFailure', p[3])
end
if trace and trace ~= '' then
  redis.call('HSET', childKey, 'trace', trace)
end
child_paused(parentKey, childKey)
queue_push_in(inKey, ringKey, child, now, parent[8])
redis.call('ZADD', liveKey, now, child)
local liveCount = live_batch(liveOwnersKey)
live_began(liveCount, parent[3])
live_flush(liveCount)
redis.call('HSET', parentKey, 'processingState', 'sleeping', 'waitingFor', child, 'step', stepIndex, 'updated', now)
if parent[11] then
  redis.call('ZADD', waitingKey, parent[11], parentId)
end
queue_leave_node(parentKey, processingKey, inflightKey, parentId)
local counts = {}
stats_tally(counts, 'queued', p[2], pipeline, parent[3])
stats_write({stats1, stats2, stats3}, now, counts)
return {CODE.OK, p[1]}
