-- migrate: move one batch of a pipeline's live transactions in a partition to another version (issue 34), or
-- undo that. Walks liveZ (every transaction the partition holds, by created time) from a cursor, at most batch
-- entries a call, and looks at those of the pipeline: one on a version to move from gets the new version and its
-- next step mapped, in one write (its input, data, is the input of the step it stands at, and stays); where it
-- waits (sleepingZ, a switch, a retry's time, a queue, a pause) is left as it is, so its wake-up holds. One
-- running now is marked (migrateTo) and moved by checkpoint.lua at its next step boundary. One waiting for a
-- child or the branches of a parallel step stays (the step that waits would be another). Undo moves back those
-- still at the version and step they were moved to (field migrated), and drops a mark not reached yet.
-- KEYS[1] liveZ   KEYS[2] eventsL (one migrated event per call that moved any)
-- ARGV[1] pipeline name   ARGV[2] mode: 'dry', 'apply' or 'undo'   ARGV[3] to version
-- ARGV[4] JSON {fromVersion: [new step index (0-based) per old step, -1 when not mapped]}: the versions to move
--   from, each with its map (undo: ignored)
-- ARGV[5] cursor score ('' = from the start)   ARGV[6] entries of that score already walked
-- ARGV[7] batch (entries of liveZ looked at)   ARGV[8] now (ms)   ARGV[9] by   ARGV[10] the stateH key prefix: the
--   transactions are known only from liveZ
-- ARGV[11] the most entries kept in a transaction's migrations history (limits.maxErrors)
-- Replies:
--   {cursorScore, cursorSkip, done (1 when liveZ has no more), counts JSON}
--   counts: {moved, atBoundary (running: marked), already (on the to version), cannot: {reason: n}}; undo:
--   {undone, cannot: {reason: n}}. A dry run counts what apply would do and writes nothing.
-- #include events
-- #include migrate

local liveKey, eventsKey = KEYS[1], KEYS[2]
local name, mode, to, maps = ARGV[1], ARGV[2], ARGV[3], cjson.decode(ARGV[4])
local cursor, skip, batch, now, by = ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8], ARGV[9]
local statePrefix, maxKept = ARGV[10], tonumber(ARGV[11])
local dry, undo = mode == 'dry', mode == 'undo'

local rows = redis.call('ZRANGEBYSCORE', liveKey, cursor == '' and '-inf' or cursor, '+inf', 'WITHSCORES',
  'LIMIT', cursor == '' and 0 or skip, batch)
local counts = {moved = 0, atBoundary = 0, already = 0, undone = 0, cannot = {}}
local function cannot(reason)
  counts.cannot[reason] = (counts.cannot[reason] or 0) + 1
end

local function move(id, k, t)
  local version, ps, step = t[2], t[3], tonumber(t[4]) or 0
  if version == to then
    counts.already = counts.already + 1
    return
  end
  local map = maps[version]
  if not map then
    return
  end
  if t[5] and t[5] ~= '' then
    return cannot('waiting-child')
  end
  local target = tonumber(map[step + 1])
  if not target or target < 0 then
    return cannot('step-not-mapped')
  end
  if ps == 'processing' then
    counts.atBoundary = counts.atBoundary + 1
    if not dry then
      redis.call('HSET', k, 'migrateTo', cjson.encode({from = version, to = to, map = map, by = by, at = tonumber(now)}))
    end
    return
  end
  counts.moved = counts.moved + 1
  if dry then
    return
  end
  migrate_move(k, version, step, to, target, now, by, maxKept)
end

local function back(id, k, t)
  if t[6] then
    -- marked, its step still running: the mark goes, it stays where it is
    counts.undone = counts.undone + 1
    if not dry then
      redis.call('HDEL', k, 'migrateTo')
    end
    return
  end
  local ok, m = pcall(cjson.decode, t[7] or '')
  if not ok or type(m) ~= 'table' or m.to ~= to then
    return
  end
  if t[2] ~= m.to or (tonumber(t[4]) or 0) ~= m.toStep - 1 then
    return cannot('moved-on')
  end
  if t[3] == 'processing' then
    return cannot('running')
  end
  counts.undone = counts.undone + 1
  if dry then
    return
  end
  migrate_move(k, m.to, m.toStep - 1, m.from, m.fromStep - 1, now, by, maxKept)
  -- moved back: nothing to undo any more (migrations keeps both moves)
  redis.call('HDEL', k, 'migrated')
end

local score, same = cursor, skip
for i = 1, #rows, 2 do
  local id, sc = rows[i], rows[i + 1]
  if sc == score then
    same = same + 1
  else
    score, same = sc, 1
  end
  local k = statePrefix .. id
  local t = redis.call('HMGET', k, 'type', 'version', 'processingState', 'step', 'waitingFor', 'migrateTo',
    'migrated')
  if t[1] == name and t[3] and t[3] ~= 'complete' then
    if undo then
      back(id, k, t)
    else
      move(id, k, t)
    end
  end
end
local changed = counts.moved + counts.atBoundary + counts.undone
if not dry and changed > 0 then
  event_log(eventsKey, 'migrated', now, '', name, {pipeline = name, to = to, undo = undo, moved = counts.moved,
    atBoundary = counts.atBoundary, undone = counts.undone, by = by})
end
return {score, tostring(same), #rows < batch * 2 and 1 or 0, cjson.encode(counts)}
