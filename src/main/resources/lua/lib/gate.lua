-- gate (included by start.lua, and by complete.lua and cancel.lua through lib/fork.lua): debounce, throttle and
-- singleton at start (issue 33). A gate belongs to one owner, pipeline and key value: gateH:<id> and gateZ:<id>,
-- in the partition those hash to, where the gated transactions live too (docs/decisions.md), so each decision is
-- part of one start.lua call, and each release part of the script that ends the transaction.
--   debounce   gateH tx → the transaction waiting to start (scheduled), first → when its window opened (ms)
--   throttle   gateZ txId → when it starts (ms): the starts of the last period, and those queued after them
--   singleton  gateH live → the live transaction, seq → waiters so far; gateZ txId → seq: the waiters, in order
-- A gated transaction shows its gate on stateH field gate (JSON: kind, key, period, maxWait, limit, queue as
-- decided, and how it passed: outcome passed, delayed, queued or waiting, with behind, starts, startAt). A singleton's
-- also holds fields gateH and gateZ, the key names, so every end path can release it without more keys (as slot
-- does for caps); its waiters have processingState pending (in no queue, so no wake or stuck repair starts them).

local function gate_view(g, outcome, extra)
  local v = {kind = g.kind, key = g.key, outcome = outcome}
  if g.period > 0 then v.period = g.period end
  if g.maxWait > 0 then v.maxWait = g.maxWait end
  if g.kind == 'throttle' then v.limit = g.limit end
  if g.kind ~= 'debounce' then v.queue = g.queue end
  for k, x in pairs(extra or {}) do v[k] = x end
  return v
end

-- Decides a start before anything of it is written. Answers nil (no gate), or a plan {g, startAt ('' or ms as
-- text), hold (a singleton's waiter), view}, or nil and a reply that ends the start: THROTTLED (when a slot
-- frees), GATE_BUSY (the live txId), or DEBOUNCED (the pending txId, whose input and metadata this start's
-- replaced, and whose start moved to now + period, at most first + maxWait).
local function gate_plan(arg, gateKey, gateZKey, sleepingKey, stateKey, txId, now, metadata, input)
  if arg == '' then
    return nil
  end
  local g, n = cjson.decode(arg), tonumber(now)
  local other = function(id) return string.sub(stateKey, 1, #stateKey - #txId) .. id end
  if g.kind == 'debounce' then
    local pending = redis.call('HGET', gateKey, 'tx')
    local okey = pending and other(pending)
    if okey and redis.call('HGET', okey, 'processingState') == 'scheduled' then
      local first = tonumber(redis.call('HGET', gateKey, 'first'))
      local at = n + g.period
      if g.maxWait > 0 then at = math.min(at, first + g.maxWait) end
      local v = cjson.decode(redis.call('HGET', okey, 'gate'))
      v.starts, v.startAt = v.starts + 1, at
      redis.call('HSET', okey, 'input', input, 'metadata', metadata, 'startAt', at, 'updated', now,
        'gate', cjson.encode(v))
      redis.call('ZADD', sleepingKey, at, pending)
      redis.call('PEXPIRE', gateKey, at - n + g.period)
      return nil, {CODE.DEBOUNCED, pending}
    end
    return {g = g, startAt = string.format('%d', n + g.period), view = gate_view(g, 'delayed', {starts = 1,
      startAt = n + g.period})}
  elseif g.kind == 'throttle' then
    if redis.call('ZCOUNT', gateZKey, '(' .. (n - g.period), '+inf') < g.limit then
      return {g = g, startAt = '', at = n, view = gate_view(g, 'passed')}
    end
    -- the limit-th latest start: one more fits once a period has passed since it (and after the latest one)
    local nth = redis.call('ZREVRANGE', gateZKey, g.limit - 1, g.limit - 1, 'WITHSCORES')
    local last = redis.call('ZREVRANGE', gateZKey, 0, 0, 'WITHSCORES')
    local at = math.max(n, tonumber(last[2]), tonumber(nth[2]) + g.period)
    if not g.queue then
      return nil, {CODE.THROTTLED, tostring(at)}
    end
    return {g = g, startAt = at > n and string.format('%d', at) or '', at = at,
      view = gate_view(g, at > n and 'queued' or 'passed', {startAt = at})}
  end
  local live = redis.call('HGET', gateKey, 'live')
  if live and redis.call('HGET', other(live), 'status') == 'running' then
    if not g.queue then
      return nil, {CODE.GATE_BUSY, live}
    end
    return {g = g, startAt = '', hold = true, view = gate_view(g, 'waiting', {behind = live})}
  end
  return {g = g, startAt = '', view = gate_view(g, 'passed')}
end

-- Writes a planned start's gate, once its transaction's stateH is written.
local function gate_commit(plan, gateKey, gateZKey, stateKey, txId, now)
  local g, n = plan.g, tonumber(now)
  redis.call('HSET', stateKey, 'gate', cjson.encode(plan.view))
  if g.kind == 'debounce' then
    redis.call('HSET', gateKey, 'tx', txId, 'first', n)
    redis.call('PEXPIRE', gateKey, 2 * g.period)
  elseif g.kind == 'throttle' then
    redis.call('ZREMRANGEBYSCORE', gateZKey, '-inf', n - g.period)
    redis.call('ZADD', gateZKey, plan.at, txId)
    redis.call('PEXPIRE', gateZKey, plan.at - n + g.period)
  else
    redis.call('HSET', stateKey, 'gateH', gateKey, 'gateZ', gateZKey)
    if plan.hold then
      redis.call('ZADD', gateZKey, redis.call('HINCRBY', gateKey, 'seq', 1), txId)
    else
      redis.call('HSET', gateKey, 'live', txId)
    end
  end
end

-- A singleton's transaction ended (complete.lua, lib/fork.lua fork_end_cancelled): the live one lets the first
-- waiter still waiting start (queued now on its group's in-queue, as wake.lua queues a sleeper) and become the
-- live one; a waiter leaves the line. prefixes: the ending script's key prefixes (queue: qInZ, ring: qRingL).
local function gate_release(key, id, prefixes, now)
  local f = redis.call('HMGET', key, 'gateH', 'gateZ')
  if not f[1] then
    return
  end
  redis.call('HDEL', key, 'gateH', 'gateZ')
  if redis.call('HGET', f[1], 'live') ~= id then
    redis.call('ZREM', f[2], id)
    return
  end
  local statePrefix = string.sub(key, 1, #key - #id)
  for _ = 1, 100 do
    local head = redis.call('ZPOPMIN', f[2])
    if #head == 0 then
      redis.call('DEL', f[1], f[2])
      return
    end
    local nkey = statePrefix .. head[1]
    local s = redis.call('HMGET', nkey, 'processingState', 'status', 'group', 'qBoost', 'gate')
    if s[1] == 'pending' and s[2] == 'running' then
      local v = cjson.decode(s[5])
      v.outcome, v.waited = 'passed', tonumber(now)
      redis.call('HSET', f[1], 'live', head[1])
      redis.call('HSET', nkey, 'processingState', 'queued', 'updated', now, 'gate', cjson.encode(v))
      queue_push_in(prefixes.queue .. s[3], prefixes.ring .. s[3], head[1], now, s[4])
      return
    end
  end
  redis.call('HDEL', f[1], 'live') -- a hundred stale waiters: the next start takes the gate
end
