-- live (included by start, hop, fork, rerun, complete and cancel): how many transactions each owner has live
-- (running: started and not yet ended, delayed ones too) in this partition, in liveOwnersH (owner -> count).
-- Every path that makes a transaction running calls live_began (start, a child, a branch, a compensation, a
-- rerun); every path that ends one calls live_ended (complete, and lib/fork.lua's fork_end_cancelled, which
-- cancel and every cancel walk end waiting transactions through), so none is missed. A count never goes below
-- 0: a transaction started before counting began ends uncounted.

local function live_began(key, owner)
  if owner and owner ~= '' then
    redis.call('HINCRBY', key, owner, 1)
  end
end

local function live_ended(key, owner)
  if owner and owner ~= '' and redis.call('HINCRBY', key, owner, -1) <= 0 then
    redis.call('HDEL', key, owner)
  end
end

-- Whether one more of the owner's transactions fits in this partition, and the share of the limit that holds
-- here: limit (the owner's maxLive) split evenly over the partitions, rounded up (see docs/decisions.md).
local function live_room(key, owner, limit, partitions)
  local here = math.ceil(limit / partitions)
  return (tonumber(redis.call('HGET', key, owner) or '0') or 0) < here, here
end
