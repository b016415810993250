-- migrate (included by migrate.lua and checkpoint.lua): moving a live transaction to another version of its
-- pipeline (issue 34). A move writes the version and the next step together (its input, data, stays: it is the
-- input of the step it stands at), keeps the move in migrated, JSON {from, to, fromStep, toStep, at, by} (steps
-- from 1; what an undo checks and reverses), and appends it to migrations, the transaction's history of moves.

-- Appends entry to the history stored (JSON text or nil), keeping the newest maxKept entries.
local function migrate_remember(k, stored, entry, maxKept, now)
  local all = stored and cjson.decode(stored) or {}
  all[#all + 1] = entry
  while #all > maxKept do
    table.remove(all, 1)
  end
  redis.call('HSET', k, 'migrations', cjson.encode(all), 'updated', now)
end

-- Moves the transaction at key to version to at step target (0-based), from version at step (0-based).
local function migrate_move(k, from, step, to, target, now, by, maxKept)
  local entry = {from = from, to = to, fromStep = step + 1, toStep = target + 1, at = tonumber(now), by = by}
  redis.call('HSET', k, 'version', to, 'step', target, 'migrated', cjson.encode(entry))
  redis.call('HDEL', k, 'migrateTo')
  local h = redis.call('HMGET', k, 'retry', 'migrations')
  -- a retry's view names its step (from 1): it follows the move
  local ok, r = pcall(cjson.decode, h[1] or '')
  if ok and type(r) == 'table' then
    r.step = target + 1
    redis.call('HSET', k, 'retry', cjson.encode(r))
  end
  migrate_remember(k, h[2], entry, maxKept, now)
end

-- At a step boundary (checkpoint.lua) of one marked by migrate.lua (mark: JSON {from, to, map, by, at}): moves
-- its next step (0-based) by the mark's map. The mark goes either way; true when it moved.
local function migrate_at_boundary(k, mark, nextStep, now, maxKept)
  redis.call('HDEL', k, 'migrateTo')
  local ok, m = pcall(cjson.decode, mark)
  if not ok or type(m) ~= 'table' or type(m.map) ~= 'table' then
    return false
  end
  local target = tonumber(m.map[nextStep + 1])
  if not target or target < 0 then
    return false
  end
  migrate_move(k, m.from, nextStep, m.to, target, now, m.by, maxKept)
  return true
end
