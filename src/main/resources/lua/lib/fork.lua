-- fork (included by complete.lua and cancel.lua, after queue, webhooks, stats, compensate and gate): cancelling
-- down a chain of waiting transactions, and the join of a flow/parallel step (see fork.lua).
-- env is a table: now, archiveAt, counts (stats), prefixes {state, pipeline, queue, out, ring, webhook, live,
-- liveOwners (lib/live.lua, included before this), ended (phaseZ:ended, the search index of what ended other
-- than success)},
-- archiveKey (toArchiveZ), notifyKey, sleepingKey (sleepingZ), walkKey (cancelL), all of the partition.
--
-- A parent waiting on a parallel step has processingState sleeping, waitingFor 'fork' and the field fork:
-- {"ids": [branch txIds in order], "need": n, "all": bool, "cof": bool, "max": n, "next": released}.
-- Each branch is a child transaction (parentTxId, parentGroup) in the parent's partition; one not released
-- yet (maxConcurrency) has processingState 'pending' and sits in no queue. A branch that ends records its
-- status and output on the parent (forkS:<i>, forkO:<i>, counters forkOk and forkFailed); the branch that
-- decides the join queues the parent on qOutL of its group with the joined result as childStatus,
-- childOutput and childNote, and cancels the branches still going. The decision happens in one script, on
-- the parent's fields, so it happens exactly once however many branches end at the same moment.

-- Ends a transaction that waits (queued, sleeping, pending) cancelled: answers whether its compensation
-- started (then archiving waits for the compensation).
local function fork_end_cancelled(key, id, note, owner, group, type, env)
  redis.call('HSET', key, 'status', 'cancelled', 'processingState', 'complete', 'note', note,
    'completed', env.now, 'updated', env.now)
  -- data (the next step's input) stays: rerun.lua may run the transaction again from there
  redis.call('HDEL', key, 'waitingFor', 'retry', 'stepAttempt')
  redis.call('ZREM', env.sleepingKey, id)
  local created = redis.call('HGET', key, 'created')
  if created then
    redis.call('ZADD', env.prefixes.ended, created, id)
  end
  live_ended(env.prefixes.liveOwners, owner)
  gate_release(key, id, env.prefixes, env.now)
  local compensating = compensate_start(key, id, 'cancelled', note, env.now, env.prefixes, env.counts)
  if not compensating then
    redis.call('ZADD', env.archiveKey, env.archiveAt, id)
  end
  publish(env.notifyKey, 'completed:' .. id .. ':cancelled:' .. (owner or ''))
  stats_tally(env.counts, 'completed', group, type, owner)
  stats_tally(env.counts, 'completed.cancelled', group, type, owner)
  return compensating
end

-- The cancel walk (env.walkKey, the partition's cancelL): a tree is cancelled level by level, never by
-- recursion, and at most WALK_BUDGET (20) transactions a call, so a call holds Redis a few milliseconds however
-- large the tree (DESIGN: a walk over a structure a user can make large is bounded per call). A cancelled
-- transaction pushes what it waited for on the list, a stack (RPUSH, RPOP) whose entries are
-- '<txId> <parentTxId>'; later calls (cancel-walk.lua: the cancel's own loop, the reaper leader's round)
-- carry it on. Being a stack, a cancel's tree sits above what the list held before it (its floor). A join
-- decided without some branches puts them on it too ('<txId> <parentTxId> join').
local WALK_BUDGET = 20

-- Puts what a cancelled transaction waited for on the walk: its child pipeline, or every branch of its
-- parallel step.
local function fork_cancel_children(id, waitingFor, fork, env)
  local entries = {}
  if waitingFor == 'fork' and fork then
    for _, b in ipairs(cjson.decode(fork).ids) do
      entries[#entries + 1] = b .. ' ' .. id
    end
  elseif waitingFor and waitingFor ~= '' then
    entries[1] = waitingFor .. ' ' .. id
  end
  for from = 1, #entries, 1000 do
    redis.call('RPUSH', env.walkKey, unpack(entries, from, math.min(from + 999, #entries)))
  end
  env.walked = env.walked or #entries > 0
end

-- Cancels one transaction that has not ended: a running one at its next step boundary (cancelRequested,
-- published as cancel:<txId> so a step that asks can stop early), a waiting one at once, what it waited for
-- going on the walk.
local function fork_cancel_one(id, note, env)
  local key = env.prefixes.state .. id
  local c = redis.call('HMGET', key, 'processingState', 'owner', 'group', 'type', 'waitingFor', 'fork')
  if c[1] == 'processing' then
    redis.call('HSET', key, 'cancelRequested', '1', 'updated', env.now)
    publish(env.notifyKey, 'cancel:' .. id)
  elseif c[1] and c[1] ~= 'complete' then
    fork_end_cancelled(key, id, note, c[2], c[3], c[4], env)
    fork_cancel_children(id, c[5], c[6], env)
  end
end

-- Carries the walk on while it holds more than floor entries, at most budget of them: answers how many
-- entries above floor are still to go.
local function fork_walk(env, budget, floor)
  local left = redis.call('LLEN', env.walkKey)
  while budget > 0 and left > floor do
    local id, parent, join = string.match(redis.call('RPOP', env.walkKey), '^(%S+) (%S+) ?(%S*)$')
    fork_cancel_one(id, join == 'join' and ('cancelled: its parallel step in ' .. parent .. ' was decided without it')
      or ('cancelled with its parent ' .. parent), env)
    budget = budget - 1
    left = redis.call('LLEN', env.walkKey)
  end
  return math.max(left - floor, 0)
end

-- Queues a branch held back by maxConcurrency.
local function fork_release(id, env)
  local key = env.prefixes.state .. id
  local b = redis.call('HMGET', key, 'processingState', 'group', 'qBoost')
  if b[1] == 'pending' then
    redis.call('HSET', key, 'processingState', 'queued', 'updated', env.now)
    queue_push_in(env.prefixes.queue .. b[2], env.prefixes.ring .. b[2], id, env.now, b[3])
  end
end

-- A branch ended (status, output JSON or '', note): recorded on its parent if the parent still waits for
-- this fork; the join is decided when it holds or can no longer hold.
local function fork_branch_ended(parentId, parentGroup, childId, status, output, note, env)
  local pkey = env.prefixes.state .. parentId
  local p = redis.call('HMGET', pkey, 'processingState', 'waitingFor', 'fork')
  if p[1] ~= 'sleeping' or p[2] ~= 'fork' or not p[3] then
    return
  end
  local f = cjson.decode(p[3])
  local n, index = #f.ids, nil
  for i, b in ipairs(f.ids) do
    if b == childId then
      index = i
      break
    end
  end
  if not index or redis.call('HSETNX', pkey, 'forkS:' .. index, status) == 0 then
    return
  end
  redis.call('HSET', pkey, 'forkO:' .. index, output or '')
  local ok = redis.call('HINCRBY', pkey, 'forkOk', status == 'success' and 1 or 0)
  local bad = redis.call('HINCRBY', pkey, 'forkFailed', status == 'success' and 0 or 1)
  local success, why
  if f.all and f.cof then
    if ok + bad == n then
      success = true
    end
  elseif ok >= f.need then
    success = true
  elseif status ~= 'success' and not f.cof then
    success = false
    why = 'branch ' .. index .. ' (' .. childId .. ') ended ' .. status .. ((note and note ~= '') and (': ' .. note) or '')
  elseif n - bad < f.need then
    success = false
    why = bad .. ' of ' .. n .. ' branches did not succeed; ' .. f.need .. ' had to'
  end
  if success == nil then
    if f.next < n and f.next - ok - bad < f.max then
      f.next = f.next + 1
      redis.call('HSET', pkey, 'fork', cjson.encode(f))
      fork_release(f.ids[f.next], env)
    end
    return
  end
  -- decided: the outputs in order (null where a branch did not succeed), built as text so branch outputs
  -- never pass through Lua numbers
  local outs, sts, open = {}, {}, {}
  for i = 1, n do
    local r = redis.call('HMGET', pkey, 'forkS:' .. i, 'forkO:' .. i)
    if not r[1] then
      open[#open + 1] = f.ids[i]
    end
    sts[i] = cjson.encode(r[1] or 'cancelled')
    outs[i] = (r[1] == 'success' and r[2] and r[2] ~= '') and r[2] or 'null'
    redis.call('HDEL', pkey, 'forkS:' .. i, 'forkO:' .. i)
  end
  redis.call('HDEL', pkey, 'forkOk', 'forkFailed')
  redis.call('HSET', pkey, 'processingState', 'queued', 'childStatus', success and 'success' or 'failed',
    'childOutput', '{"outputs":[' .. table.concat(outs, ',') .. '],"statuses":[' .. table.concat(sts, ',') .. ']}',
    'childNote', why or '', 'updated', env.now)
  queue_push(env.prefixes.out .. parentGroup, env.prefixes.ring .. parentGroup, parentId)
  -- the branches still going leave on the walk (a wide fork's would be too many for one call)
  for from = 1, #open, 1000 do
    local entries = {}
    for i = from, math.min(from + 999, #open) do
      entries[#entries + 1] = open[i] .. ' ' .. parentId .. ' join'
    end
    redis.call('RPUSH', env.walkKey, unpack(entries))
  end
  env.walked = env.walked or #open > 0
end
