-- stuck: find a partition's transactions that look running but are wedged, a bounded batch from each place they
-- can hide; list them (stuckH, stuckZ, counted by reason in stuckCountH) with one `stuck` event when one is first
-- found; repair the one kind that is safe to repair; drop from the list what has moved on. The reaper leader of
-- the partition calls it once per 5 s stats slot, after waking the sleepers that are due.
-- KEYS[1] stuckZ   KEYS[2] stuckH   KEYS[3] stuckCountH   KEYS[4] eventsL   KEYS[5] sleepingZ   KEYS[6] liveZ
-- KEYS[6 + i] qHeldS:<group i> for each of the G groups the live nodes serve
-- ARGV[1] now (ms)   ARGV[2] grace (ms)   ARGV[3] held after (ms)   ARGV[4] batch: the most looked at per place
-- ARGV[5] where the walk over liveZ stands (a rank)   ARGV[6] where the second look over stuckZ stands (a rank)
-- ARGV[7] the stateH key prefix: the transactions, and the children they wait for, are known only once an
--   index or a parent's state is read, so their keys are the prefix and a txId
-- ARGV[8] G, then ARGV[8 + i] the qHeldZ key prefix of group i (Keys.qHeldZ(p, group, "")): the limits that hold
--   work back are known only once qHeldS is read. A listed `held` entry keeps the qHeldZ key it was found in.
-- ARGV[9 + G ..] the running transactions the caller judged past their step's timeout plus grace (processingZ
--   read in Java, which knows the pipelines' timeouts), five arguments each: txId, attempt, step, when the step
--   began (ms), its timeout (ms)
-- Reasons: running (past its step's timeout plus grace, still held by its node: reported), sleeping (a sleeper or
-- a delayed start past its wake time by more than grace: the wake is behind, reported), retrying (the same for a
-- retry's next attempt), waiting (a parent waiting for a child, or for branches, that all ended more than grace
-- ago: reported), held (queued, held back by a rate or concurrency limit for more than held after: reported).
-- A paused transaction (pause.lua) is none of these: it stands still on purpose, parked off its queue or
-- sleepingZ. A sleeper or retry in no sleepingZ would never wake: it is repaired (put in sleepingZ due now, so the next
-- wake queues it; the step runs again as after any sleep) and an event says so; it is not listed.
-- Replies: {walk cursor, second-look cursor, found (newly listed), repaired, cleared (left the list)}
-- #include events

local stuckKey, listKey, countKey, eventsKey, sleepingKey, liveKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5],
  KEYS[6]
local now, grace, heldAfter, batch = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local walkAt, lookAt, statePrefix, groupCount = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
local runningFrom = 9 + tonumber(ARGV[8])
local runningCount = math.floor((#ARGV - runningFrom + 1) / 5)
local function held_of(i)
  return KEYS[6 + i], ARGV[8 + i]
end
local function running_of(i)
  local a = runningFrom + 5 * (i - 1)
  return ARGV[a], ARGV[a + 1], ARGV[a + 2], tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
end

local tally = {found = 0, repaired = 0, cleared = 0}
local FIELDS = {'status', 'processingState', 'waitingFor', 'retry', 'fork', 'attempt', 'step', 'node', 'owner', 'type',
  'paused'}

local function state_of(id)
  local s = redis.call('HMGET', statePrefix .. id, unpack(FIELDS))
  return {status = s[1], ps = s[2], waitingFor = s[3], retry = s[4], fork = s[5], attempt = s[6], step = s[7],
    node = s[8], owner = s[9], type = s[10], paused = s[11]}
end

-- when what a waiting parent waits for ended (ms; 0 when gone), or nil while some of it still runs (or is pending)
local function ended_at(waitingFor, forkJson)
  local ids = {waitingFor}
  if waitingFor == 'fork' then
    local ok, f = pcall(cjson.decode, forkJson or '')
    ids = ok and type(f) == 'table' and type(f.ids) == 'table' and f.ids or {}
  end
  local latest = 0
  for i, child in ipairs(ids) do
    if i > 1000 then
      return nil -- too wide to judge in one call: left alone
    end
    local c = redis.call('HMGET', statePrefix .. child, 'status', 'completed')
    if c[1] == 'running' then
      return nil
    end
    latest = math.max(latest, tonumber(c[2]) or 0)
  end
  return latest
end

-- why a transaction found in an index or on the walk is stuck: reason, details, and true when it is to be repaired
local function classify(id, s)
  if s.status ~= 'running' or s.paused then
    return nil
  end
  if s.ps == 'sleeping' and s.waitingFor and s.waitingFor ~= '' then
    local at = ended_at(s.waitingFor, s.fork)
    if at and now - at > grace then
      return 'waiting', {waitingFor = s.waitingFor, endedAt = at}
    end
    return nil
  end
  if s.ps == 'sleeping' or s.ps == 'scheduled' then
    local reason = (s.retry and s.retry ~= '') and 'retrying' or 'sleeping'
    local wakeAt = tonumber(redis.call('ZSCORE', sleepingKey, id))
    if not wakeAt then
      return reason, {wakeAt = 0}, true
    end
    if now - wakeAt > grace then
      return reason, {wakeAt = wakeAt}
    end
  end
  return nil
end

local function list(id, s, reason, details)
  local old = redis.call('HGET', listKey, id)
  if old then
    local e = cjson.decode(old)
    if e.reason == reason then
      return
    end
    redis.call('HINCRBY', countKey, e.reason, -1)
  end
  details.reason, details.since, details.attempt, details.step = reason, now, s.attempt, s.step
  details.owner, details.type, details.node = s.owner or '', s.type or '', s.node or ''
  local text = cjson.encode(details)
  redis.call('HSET', listKey, id, text)
  redis.call('ZADD', stuckKey, now, id)
  redis.call('HINCRBY', countKey, reason, 1)
  local event = cjson.decode(text)
  event.txId, event.action = id, 'reported'
  event_log(eventsKey, 'stuck', now, s.node, id, event)
  tally.found = tally.found + 1
end

local function repair(id, s, reason)
  redis.call('ZADD', sleepingKey, now, id)
  event_log(eventsKey, 'stuck', now, s.node, id, {txId = id, reason = reason, action = 'woken', owner = s.owner or '',
    type = s.type or '', note = 'it slept in no sleepingZ, so nothing would wake it: due now, the wake queues it'})
  tally.repaired = tally.repaired + 1
end

local function consider(id)
  local s = state_of(id)
  local reason, details, fix = classify(id, s)
  if fix then
    repair(id, s, reason)
  elseif reason then
    list(id, s, reason, details)
  end
end

-- 1. running: what the caller judged overdue, if its node still holds the same attempt at the same step
for i = 1, runningCount do
  local id, attempt, step, began, timeout = running_of(i)
  local s = state_of(id)
  if s.status == 'running' and s.ps == 'processing' and s.attempt == attempt and s.step == step then
    list(id, s, 'running', {stepBegan = began, timeoutMs = timeout})
  end
end

-- 2. sleepers (and retries, delayed starts) past their wake time by more than grace
for _, id in ipairs(redis.call('ZRANGEBYSCORE', sleepingKey, '-inf', now - grace, 'LIMIT', 0, batch)) do
  consider(id)
end

-- 3. held back by a limit for longer than held after (qHeldZ is scored as the in-queue: when it was queued)
local heldLeft = batch
for g = 1, groupCount do
  local heldSet, heldPrefix = held_of(g)
  for _, limit in ipairs(redis.call('SMEMBERS', heldSet)) do
    local heldKey = heldPrefix .. limit
    if heldLeft <= 0 then
      break
    end
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', heldKey, '-inf', '(' .. (now - heldAfter), 'LIMIT', 0,
      heldLeft)) do
      heldLeft = heldLeft - 1
      local s = state_of(id)
      if s.status == 'running' and s.ps == 'queued' and not s.paused then
        list(id, s, 'held', {limit = limit, heldKey = heldKey})
      end
    end
  end
end

-- 4. the walk: batch transactions of liveZ from where the last call stopped (what waits on ended children, or
-- sleeps with nothing to wake it, is in no index)
local walked = redis.call('ZRANGE', liveKey, walkAt, walkAt + batch - 1)
for _, id in ipairs(walked) do
  consider(id)
end
local nextWalk = #walked < batch and 0 or walkAt + #walked

-- 5. the second look: listed ones that have moved on (ended, woke, ran on, let through) leave the list
local function still(id, e)
  local s = state_of(id)
  if e.reason == 'running' then
    return s.status == 'running' and s.ps == 'processing' and s.attempt == e.attempt and s.step == e.step
  elseif e.reason == 'held' then
    return s.status == 'running' and s.ps == 'queued' and not s.paused
      and redis.call('ZSCORE', e.heldKey, id) ~= false
  end
  return (classify(id, s)) == e.reason
end
local looked = redis.call('ZRANGE', stuckKey, lookAt, lookAt + batch - 1)
local kept = 0
for _, id in ipairs(looked) do
  local text = redis.call('HGET', listKey, id)
  local ok, e = pcall(cjson.decode, text or '')
  if ok and type(e) == 'table' and still(id, e) then
    kept = kept + 1
  else
    redis.call('HDEL', listKey, id)
    redis.call('ZREM', stuckKey, id)
    if ok and type(e) == 'table' and e.reason then
      redis.call('HINCRBY', countKey, e.reason, -1)
    end
    tally.cleared = tally.cleared + 1
  end
end
local nextLook = #looked < batch and 0 or lookAt + kept
return {nextWalk, nextLook, tally.found, tally.repaired, tally.cleared}
