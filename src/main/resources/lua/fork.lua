-- fork: a running parent starts the branches of a flow/parallel step as child transactions and leaves its
-- worker to wait for their join (lib/fork.lua decides it as branches end, in complete.lua and cancel.lua).
-- KEYS[1] stateH:<parentTxId>   KEYS[2] processingZ   KEYS[3] inflightZ:<nodeId>
-- KEYS[4..6] stats1H, stats2H, stats3H of the slots that hold now (each branch counts as queued)
-- KEYS[7] liveZ (the search index: each branch is added)
-- KEYS[8] phaseZ:waiting (a search index: the parent, now waiting for the join, is added by its created)
-- For branch i (1..n), four keys from KEYS[8 + 4(i-1) + 1]: stateH:<branchTxId>, pipelineH:<its pipeline>,
--   qInZ:<its group>, qRingL:<its group> (the group the caller expects; checked)
-- KEYS[#KEYS] liveOwnersH, after the branches' keys (each branch is live: lib/live.lua)
-- ARGV[1] parentTxId   ARGV[2] attempt the node was given   ARGV[3] index of the parallel step   ARGV[4] now
-- ARGV[5] branches that must succeed (need)   ARGV[6] '1' when the join is all   ARGV[7] '1' to continue on
-- failure   ARGV[8] branches running at once at most (maxConcurrency)
-- For branch i, four arguments from ARGV[8 + 4(i-1) + 1]: branchTxId, pipeline, input JSON, expected group
-- ARGV[8 + 4n + 1] the branches' trace (the traceparent of the parallel step's span) or ''
-- ARGV[8 + 4n + 2] the partition's stateH key prefix (the root of the parent's tree is known only from its state)
-- ARGV[8 + 4n + 3] limits.maxDepth   ARGV[8 + 4n + 4] limits.maxDescendants
-- Replies:
--   {'OK'}                          the branches exist (the first maxConcurrency queued, the rest pending);
--                                   the parent is sleeping, waitingFor 'fork'
--   {'FENCED', attempt, state}      the caller no longer owns the parent; nothing written
--   {'CANCELLED'}                   its owner asked to cancel the parent: nothing written; the caller
--                                   completes it cancelled instead
--   {'UNKNOWN_PIPELINE', name}      a branch names no pipeline; nothing written
--   {'GROUP_CHANGED', name, group}  a branch's pipeline belongs to another group: call again with its keys
--   {'DEPTH_EXCEEDED', depth, max}        the branches would nest deeper than maxDepth; nothing written
--   {'DESCENDANTS_EXCEEDED', count, max}  the root's tree would hold more than maxDescendants; nothing written
-- Every branch lives in its parent's partition (its txId must be one of it), so all of this is one slot.
-- Each branch carries root and depth (lib/child.lua); the root's descendants count grows by n.
-- #include publish
-- #include codes
-- #include queue
-- #include stats
-- #include fence
-- #include child
-- #include live

local parentKey, processingKey, inflightKey, stats1, stats2, stats3, liveKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4],
  KEYS[5], KEYS[6], KEYS[7]
local waitingKey, liveOwnersKey = KEYS[8], KEYS[#KEYS]
local id, attempt, stepIndex, now, need, all, cof, max = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]),
  ARGV[6] == '1', ARGV[7] == '1', tonumber(ARGV[8])
local n = (#KEYS - 9) / 4
-- branch i: its keys (stateH, pipelineH, qInZ, qRingL) and args (txId, pipeline, input, expected group)
local function branch_keys(i) local k = 8 + 4 * (i - 1) return KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4] end
local function branch_args(i) local a = 8 + 4 * (i - 1) return ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4] end
local trace, statePrefix = ARGV[8 + 4 * n + 1] or '', ARGV[8 + 4 * n + 2]
local maxDepth, maxDescendants = tonumber(ARGV[8 + 4 * n + 3]), tonumber(ARGV[8 + 4 * n + 4])

local parent, refused = child_parent(parentKey, attempt)
if refused then
  return refused
end
local tree
tree, refused = child_tree(id, parent, statePrefix, n, maxDepth, maxDescendants)
if refused then
  return refused
end
local versions = {}
for i = 1, n do
  local _, name, _, group = branch_args(i)
  local _, pipelineKey = branch_keys(i)
  local p = redis.call('HMGET', pipelineKey, 'version', 'nodeGroup', 'onFailure')
  if not p[1] then
    return {CODE.UNKNOWN_PIPELINE, name}
  end
  if p[2] ~= group then
    return {CODE.GROUP_CHANGED, name, p[2]}
  end
  versions[i] = p
end
local counts, ids = {}, {}
local liveCount = live_batch(liveOwnersKey)
for i = 1, n do
  local stateKey, _, inKey, ringKey = branch_keys(i)
  local child, name, input = branch_args(i)
  local p = versions[i]
  ids[i] = child
  redis.call('HSET', stateKey,
    'owner', parent[3], 'externalId', '', 'type', name, 'version', p[1], 'group', p[2],
    'status', 'running', 'processingState', i <= max and 'queued' or 'pending', 'attempt', 0, 'step', 0,
    'created', now, 'updated', now, 'metadata', parent[4], 'input', input,
    'parentTxId', id, 'parentGroup', parent[5], 'branch', i, 'priority', parent[7] or '0',
    'qBoost', parent[8] or '0', 'root', tree.root, 'depth', tree.depth)
  if p[3] and p[3] ~= '' then
    redis.call('HSET', stateKey, 'onFailure', p[3])
  end
  if trace ~= '' then
    redis.call('HSET', stateKey, 'trace', trace)
  end
  child_paused(parentKey, stateKey)
  if i <= max then
    queue_push_in(inKey, ringKey, child, now, parent[8], false, i)
  end
  redis.call('ZADD', liveKey, now, child)
  live_began(liveCount, parent[3])
  stats_tally(counts, 'queued', p[2], name, parent[3])
end
child_count(tree)
-- what an earlier fork of this transaction left (one cancelled before its join was decided)
local old = redis.call('HGET', parentKey, 'fork')
for i = 1, old and #cjson.decode(old).ids or 0 do
  redis.call('HDEL', parentKey, 'forkS:' .. i, 'forkO:' .. i)
end
redis.call('HDEL', parentKey, 'forkOk', 'forkFailed')
redis.call('HSET', parentKey, 'processingState', 'sleeping', 'waitingFor', 'fork', 'step', stepIndex, 'updated', now,
  'fork', cjson.encode({ids = ids, need = need, all = all, cof = cof, max = max,
    next = math.min(max, n)}))
if parent[11] then
  redis.call('ZADD', waitingKey, parent[11], id)
end
queue_leave_node(parentKey, processingKey, inflightKey, id)
stats_write({stats1, stats2, stats3}, now, counts)
live_flush(liveCount)
return {CODE.OK}
