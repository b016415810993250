-- child (included by hop.lua and fork.lua, after codes and fence): the running parent that starts child transactions.
-- Answers the parent's fields the children copy (attempt, processingState, owner, metadata, group,
-- cancelRequested, priority, qBoost, root, depth), or nil and the reply that refuses the call: FENCED when the
-- caller no longer owns the parent, CANCELLED when its owner asked to cancel it.
local function child_parent(key, attempt)
  local parent = redis.call('HMGET', key, 'attempt', 'processingState', 'owner', 'metadata', 'group',
    'cancelRequested', 'priority', 'qBoost', 'root', 'depth', 'created')
  local refused = fence_refusal(parent[1], parent[2], parent[6], attempt)
  if refused then
    return nil, refused
  end
  return parent
end

-- The tree n new children join: their root's txId and their depth, or nil and the refusal, before anything is
-- written. A transaction without a root field is a root (depth 0); the root's stateH (its partition: every
-- child lives in its parent's, KEYS of the caller's slot) counts the transactions its tree created in all
-- (field descendants). DEPTH_EXCEEDED {code, depth, maxDepth}, DESCENDANTS_EXCEEDED {code, count, max}:
-- the limits (ARGV); CANCELLED: the root has ended (a cancel's walk has not reached the parent yet).
local function child_tree(parentId, parent, statePrefix, n, maxDepth, maxDescendants)
  local root = parent[9] or parentId
  local depth = tonumber(parent[10] or '0') + 1
  if depth > maxDepth then
    return nil, {CODE.DEPTH_EXCEEDED, depth, maxDepth}
  end
  local r = redis.call('HMGET', statePrefix .. root, 'processingState', 'descendants')
  if r[1] == 'complete' or not r[1] then
    return nil, {CODE.CANCELLED}
  end
  local count = tonumber(r[2] or '0') + n
  if count > maxDescendants then
    return nil, {CODE.DESCENDANTS_EXCEEDED, count, maxDescendants}
  end
  return {root = root, depth = depth, key = statePrefix .. root, n = n}
end

-- Records that the children exist: the root counts them.
local function child_count(tree)
  redis.call('HINCRBY', tree.key, 'descendants', tree.n)
end

-- A parent paused with its tree (pause.lua; its mark says "tree":true) while the step that starts this child ran:
-- the child starts paused under the same mark, and dequeue parks it when its turn comes; a resume of the parent
-- with its tree finds it through waitingFor or the parallel step's ids.
local function child_paused(parentKey, childKey)
  local mark = redis.call('HGET', parentKey, 'paused')
  if mark and string.find(mark, '"tree":true', 1, true) then
    redis.call('HSET', childKey, 'paused', mark)
  end
end
