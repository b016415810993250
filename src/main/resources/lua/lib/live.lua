-- live (included by start, hop, fork, rerun, complete and cancel): how many transactions each owner has live
-- (running: started and not yet ended, delayed ones too) in this partition, in liveOwnersH (owner -> count).
-- Every path that makes a transaction running calls live_began (start, a child, a branch, a compensation, a
-- rerun); every path that ends one calls live_ended (complete, and lib/fork.lua's fork_end_cancelled, which
-- cancel and every cancel walk end waiting transactions through), so none is missed. A script counts in a batch
-- (live_batch) and writes it once per owner at its end (live_flush): a call of a hundred starts or completions
-- writes one HINCRBY per owner, not one per transaction. A count never goes below 0: a transaction started
-- before counting began ends uncounted.

local function live_batch(key)
  return {key = key, read = {}, delta = {}, reserved = {}}
end

-- An owner's own limits, read once per call into cache (start.lua): its maxLive (its ownerH field, else the
-- default), and whether a cap or a rate holds its runs (then none of its starts is handed off).
local function live_owner(cache, ownerPrefix, owner, default)
  local o = cache[owner]
  if not o then
    local f = redis.call('HMGET', ownerPrefix .. owner, 'maxLive', 'cap', 'rate')
    o = {maxLive = tonumber(f[1] or '') or default,
      limited = (tonumber(f[2] or '') or 0) > 0 or (tonumber(f[3] or '') or 0) > 0}
    cache[owner] = o
  end
  return o
end

local function live_began(batch, owner)
  if owner and owner ~= '' then
    batch.delta[owner] = (batch.delta[owner] or 0) + 1
  end
end

local function live_ended(batch, owner)
  if owner and owner ~= '' then
    batch.delta[owner] = (batch.delta[owner] or 0) - 1
  end
end

-- Whether one more of the owner's transactions fits in this partition, and the share of the limit that holds
-- here: limit (the owner's maxLive) split evenly over the partitions, rounded up (see docs/decisions.md).
local function live_room(batch, owner, limit, partitions)
  local here = math.ceil(limit / partitions)
  local stored = batch.read[owner]
  if stored == nil then
    -- read by reserving: the +1 that a start admitted here would write anyway, so the usual call (one start
    -- that fits) writes the count once and reads nothing more; live_flush takes the reservation back out
    stored = redis.call('HINCRBY', batch.key, owner, 1) - 1
    batch.read[owner] = stored
    batch.reserved[owner] = 1
  end
  return stored + (batch.delta[owner] or 0) < here, here
end

-- Writes the batch's counts: one HINCRBY per owner it changed, less what live_room reserved (a start that was
-- refused after its owner's count was read gives its reservation back here). A count that reaches 0 stays as a 0 field (a
-- field per owner that ever started here; deleting it would cost a command at nearly every completion at a
-- steady load); one below 0 (an end counted that was never begun) is set back to 0.
local function live_flush(batch)
  for owner in pairs(batch.reserved) do
    batch.delta[owner] = (batch.delta[owner] or 0) - 1
  end
  for owner, d in pairs(batch.delta) do
    if d ~= 0 and redis.call('HINCRBY', batch.key, owner, d) < 0 then
      redis.call('HSET', batch.key, owner, 0)
    end
  end
  batch.delta = {}
  batch.reserved = {}
end
