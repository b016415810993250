-- stats (included by the scripts that count): counters in three series of time slots, whose keys the
-- caller passes (it knows now, so it knows the slots):
--   stats1H:<slot>  5 s slots, kept 5 min     stats2H:<slot>  60 s slots, kept 2 h
--   stats3H:<slot>  600 s slots, kept 24 h    (<slot> = the slot's start, ms since the epoch)
-- statsKeys = {stats1H key, stats2H key, stats3H key} for the slots that hold now.
-- Each counter is counted in total and per node group, pipeline and owner, as the fields
-- <name>, <name>|group=<g>, <name>|pipeline=<p>, <name>|owner=<o>, in the 5 s series only: the reaper
-- leader folds each closed 5 s slot into the 60 s and 600 s slots that hold it (sample.lua), and a reader
-- adds the slots not folded yet (stats-read.lua), so a transaction's counts cost one series, not three.
-- Sampled values (queue lengths, processing, sleeping) are set in every series. A key expires (PEXPIREAT)
-- when its slot is older than the series keeps.
local STATS_SERIES = {{5000, 300000}, {60000, 7200000}, {600000, 86400000}}

-- A call tallies into counts[STATS_NEST], nested by name, group, pipeline and owner (table lookups only: a call
-- of a hundred transactions of one pipeline and owner builds each field name once, in stats_write, not four
-- strings per transaction); a table is a key no field name can be.
local STATS_NEST = {}

-- t[k], a table, made when missing (the tallies here; dequeue's limits per pipeline and owner too)
local function nested(t, k)
  local c = t[k]
  if not c then
    c = {}
    t[k] = c
  end
  return c
end

local function stats_tally(counts, name, group, pipeline, owner)
  local byOwner = nested(nested(nested(nested(counts, STATS_NEST), name), group or ''), pipeline or '')
  owner = owner or ''
  byOwner[owner] = (byOwner[owner] or 0) + 1
end

-- The tallies as fields: <name>, <name>|group=<g>, <name>|pipeline=<p>, <name>|owner=<o>.
local function stats_fields(counts)
  local nest = counts[STATS_NEST]
  if not nest then
    return counts
  end
  counts[STATS_NEST] = nil
  local function add(f, n)
    counts[f] = (counts[f] or 0) + n
  end
  for name, byGroup in pairs(nest) do
    for group, byPipeline in pairs(byGroup) do
      for pipeline, byOwner in pairs(byPipeline) do
        for owner, n in pairs(byOwner) do
          add(name, n)
          add(name .. '|group=' .. group, n)
          add(name .. '|pipeline=' .. pipeline, n)
          add(name .. '|owner=' .. owner, n)
        end
      end
    end
  end
  return counts
end

-- The slot of series i that holds t (its start, ms), and when the slot's key expires.
local function stats_slot(i, t)
  local s = STATS_SERIES[i]
  local slot = t - t % s[1]
  return slot, slot + s[1] + s[2]
end

-- Writes values ({field: value}) into one slot's key, which expires at expires. cmd is HINCRBY (counters) or
-- HSET (sampled values: the last sample taken in a slot stands for it; one HSET sets them all at once).
local function stats_put(key, values, cmd, expires)
  if cmd == 'HSET' then
    local args = {}
    for f, v in pairs(values) do
      args[#args + 1] = f
      args[#args + 1] = v
    end
    redis.call('HSET', key, unpack(args))
  else
    for f, v in pairs(values) do
      redis.call(cmd, key, f, v)
    end
  end
  redis.call('PEXPIREAT', key, expires)
end

-- values into the slots that hold now, one per key of statsKeys (the series in order).
local function stats_apply(statsKeys, now, values, cmd)
  if next(values) == nil then
    return
  end
  now = tonumber(now)
  for i, key in ipairs(statsKeys) do
    local _, expires = stats_slot(i, now)
    stats_put(key, values, cmd, expires)
  end
end

-- The upper bounds (ms) of the step-duration buckets, 1-2-5 from 1 ms to about 33 min; longer: 'inf'.
local STATS_STEP_BOUNDS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000,
  200000, 500000, 1000000, 2000000}

-- Tallies each step attempt of times (stepTimes entries, "step:startMs:durationMs:…;", step from 0) as
-- stepms.<version>.<step from 1>.<bound>|pipeline=<p> (bound: the bucket's upper bound in ms, or inf): a
-- histogram per step and pipeline version, so a reader gets counts and p50/p99 per step (api/StepStats). Only
-- the pipeline field: a step's numbers are read per pipeline. Each attempt also counts in its group's histogram
-- of every step, attemptms.<bound>|group=<g> (group given), read as a group's latency over the last hour
-- (api/Stats): a call's attempts share a few buckets, so this adds a few fields a call, not one per attempt.
local function stats_step_times(counts, version, pipeline, times, group)
  local suffix = '|pipeline=' .. pipeline
  local groupSuffix = group and ('|group=' .. group)
  for step, ms in string.gmatch(times, '(%d+):%d+:(%d+)[^;]*;') do
    ms = tonumber(ms)
    local bound = 'inf'
    for _, b in ipairs(STATS_STEP_BOUNDS) do
      if ms <= b then
        bound = b
        break
      end
    end
    local f = 'stepms.' .. version .. '.' .. (tonumber(step) + 1) .. '.' .. bound .. suffix
    counts[f] = (counts[f] or 0) + 1
    if groupSuffix then
      local g = 'attemptms.' .. bound .. groupSuffix
      counts[g] = (counts[g] or 0) + 1
    end
  end
end

-- Counts one of a pipeline version's figures, field <what>|pipeline=<p>: vstarted.<version> (start.lua) and
-- vended.<version>.<status> (complete.lua), read per version by api/PipelineVersions (a rollout's canary beside its
-- stable version). Only the pipeline field, like the step times.
local function stats_version(counts, what, pipeline)
  local f = what .. '|pipeline=' .. pipeline
  counts[f] = (counts[f] or 0) + 1
end

local function stats_write(statsKeys, now, counts)
  stats_apply({statsKeys[1]}, now, stats_fields(counts), 'HINCRBY')
end

-- The counts of a call as one text, a line '<field> <n>' each ('' when none), for the hot path's scripts (start,
-- complete): the node adds them up and writes them once a second with stats-add.lua (docs/decisions.md, "Stats
-- counted by the node"). One bulk string, not two a field: at a steady load each call carries one transaction and
-- its dozen fields, and a node that gets the same text as last time adds it up without reading it again. A field
-- holds no space or line break (names are NameForm's; stats_fields joins them with '|', '=' and '.').
local function stats_flat(counts)
  local lines = {}
  for f, n in pairs(stats_fields(counts)) do
    lines[#lines + 1] = f .. ' ' .. n -- a call's counts are small whole numbers: Lua writes them as such
  end
  return table.concat(lines, '\n')
end

-- A node's clock may run behind the leader's: a 5 s slot is folded this long after it closed, so late counts
-- still reach the coarser series.
local STATS_FOLD_LAG = 10000

-- Fields set by sample.lua (each series has its own): never folded.
local function stats_sampled(field)
  return string.sub(field, 1, 6) == 'queue.' or field == 'processing' or field == 'sleeping'
end

-- The start of the newest 5 s slot that may be folded at now.
local function stats_fold_due(now)
  local last = now - STATS_SERIES[1][1] - STATS_FOLD_LAG
  return last - last % STATS_SERIES[1][1]
end

-- Adds the counters of one 5 s slot (HGETALL's reply, flat) starting at t to the slots of the 60 s and 600 s
-- series that hold it (prefixes: their key prefixes, in that order).
local function stats_fold(fields, t, prefixes)
  local counters = {}
  for j = 1, #fields, 2 do
    if not stats_sampled(fields[j]) then
      counters[fields[j]] = fields[j + 1]
    end
  end
  if next(counters) == nil then
    return
  end
  for i, prefix in ipairs(prefixes) do
    local slot, expires = stats_slot(i + 1, t)
    stats_put(prefix .. slot, counters, 'HINCRBY', expires)
  end
end

local function stats_set(statsKeys, now, values)
  stats_apply(statsKeys, now, values, 'HSET')
end
