-- lease (included by lease.lua, archive.lua, webhook.lua): the two-key lease of a leader-only role.
-- lock1 holds the leader's nodeId for the lease; lock2 the same for lease + grace. The caller leads if it
-- holds lock1 (renewed); if neither key exists it takes both (only when mayTake); if only lock2 exists,
-- nobody else leads until it expires (that old leader may still be finishing), but the node it names may
-- go on, as nobody can have led since. Answers true when the caller leads (both keys then set anew).
local function lease_hold(lock1, lock2, nodeId, leaseMs, graceMs, mayTake)
  local holder = redis.call('GET', lock1)
  local marker = redis.call('GET', lock2)
  if not (holder == nodeId or (not holder and ((not marker and mayTake) or marker == nodeId))) then
    return false
  end
  redis.call('SET', lock1, nodeId, 'PX', leaseMs)
  redis.call('SET', lock2, nodeId, 'PX', tonumber(leaseMs) + tonumber(graceMs))
  return true
end
