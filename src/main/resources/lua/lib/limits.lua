-- limits (included by dequeue.lua, after bucket and queue): the concurrency caps and rate limits a dequeue holds
-- work back by. A call keeps them in lim = {all = {}, pairs = {}, pipelinePrefix, ownerPrefix (the partition's
-- pipelineH and ownerH key prefixes: a popped transaction's pipeline and owner, and so their limits, are known
-- only from its state), runKey (qRunH:<group>), rateKey (qRateH:<group>), partition, parts, now}.
-- Limits are a pipeline's (pipelineH fields cap and rate) and an owner's (ownerH, set through the admin API),
-- each counted per group under its name: the pipeline's, or '@' and the owner's (neither begins with '@'). A
-- transaction runs only when both have room; it is held under the first that has none.
-- Rate limits: a pipeline with a rate (pipelineH field rate, per second; each partition takes its
-- 1/partitions share) has a token bucket in qRateH:<group> (fields <pipeline>:t tokens, <pipeline>:at when
-- counted), holding at most a tenth of a second's worth (a node that finds no token is told when the next
-- comes, and rings the group then: see the reply). A transaction from the in-queue whose pipeline has no token
-- is held in qHeldZ:<group>:<pipeline> (its score kept; the pipeline named in qHeldS:<group>), off any
-- worker, and a later call takes it, before the in-queue, once tokens have come.
-- Concurrency caps: a pipeline with maxConcurrency (pipelineH field cap; partition i of P takes
-- floor(cap / P), plus 1 when i < cap mod P, so the shares add up to the cap; at least 1) counts its runs in
-- qRunH:<group>. A transaction from any queue whose pipeline has no free slot is held the same way (from the
-- admin and out queues at score 0, ahead); taking it holds a slot, noted on its state for whatever ends the
-- run (lib/queue.lua queue_slot_free, which also rings the group when work waits for the slot).

-- limit name (a pipeline, or '@' and an owner) -> its limits this call: cap {cap, running, added} and rate
-- {perSec, tokens}, each false when it has none (fields cap and rate of its pipelineH or ownerH, read once);
-- what changed is written at the end
local function limits_of(lim, name)
  local l = lim.all[name]
  if l then
    return l
  end
  local f
  if string.sub(name, 1, 1) == '@' then
    f = redis.call('HMGET', lim.ownerPrefix .. string.sub(name, 2), 'cap', 'rate')
  else
    f = redis.call('HMGET', lim.pipelinePrefix .. name, 'cap', 'rate')
  end
  l = {cap = false, rate = false}
  local total = tonumber(f[1] or '')
  if total and total > 0 then
    local p, parts = lim.partition, lim.parts
    -- at least one: a cap below the number of partitions would otherwise leave some partitions' work held
    -- for good (such a cap lets up to one run per partition; see docs/decisions.md)
    l.cap = {cap = math.max(1, math.floor(total / parts) + ((p < total % parts) and 1 or 0)),
      running = tonumber(redis.call('HGET', lim.runKey, name) or '0'), added = 0}
  end
  local perSec = tonumber(f[2] or '')
  if perSec and perSec > 0 then
    perSec = perSec / lim.parts
    local burst = math.max(1, perSec / 10)
    local b = redis.call('HMGET', lim.rateKey, name .. ':t', name .. ':at')
    l.rate = {perSec = perSec, tokens = bucket_tokens(b[1], b[2], lim.now, perSec, burst)}
  end
  lim.all[name] = l
  return l
end

-- A transaction's limits: {pipeline's, owner's} (names and limits), or false when neither has a cap or rate
-- (the common case, decided once per pipeline and owner in a call)
local function limits_for(lim, pipeline, owner)
  local byOwner = nested(lim.pairs, pipeline)
  local both = byOwner[owner]
  if both == nil then
    local on = '@' .. owner
    local pl, ol = limits_of(lim, pipeline), limits_of(lim, on)
    both = (pl.cap or pl.rate or ol.cap or ol.rate) and {{pipeline, pl}, {on, ol}} or false
    byOwner[owner] = both
  end
  return both
end

-- The first of a transaction's limits with no room: no slot, or (rate: from the in-queue and held work only)
-- no token; nil when both have room.
local function limits_blocked(q, both)
  for _, nl in ipairs(both) do
    local l = nl[2]
    if (l.rate and q >= 3 and l.rate.tokens < 1) or (l.cap and l.cap.running >= l.cap.cap) then
      return nl[1]
    end
  end
  return nil
end

