-- child (included by hop.lua and fork.lua, after codes): the running parent that starts child transactions.
-- Answers the parent's fields the children copy (attempt, processingState, owner, metadata, group,
-- cancelRequested, priority, qBoost), or nil and the reply that refuses the call: FENCED when the caller no
-- longer owns the parent, CANCELLED when its owner asked to cancel it.
local function child_parent(key, attempt)
  local parent = redis.call('HMGET', key, 'attempt', 'processingState', 'owner', 'metadata', 'group',
    'cancelRequested', 'priority', 'qBoost')
  if parent[1] ~= attempt or parent[2] ~= 'processing' then
    return nil, {CODE.FENCED, parent[1] or '', parent[2] or ''}
  end
  if parent[6] == '1' then
    return nil, {CODE.CANCELLED}
  end
  return parent
end
