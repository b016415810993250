-- stats (included by the scripts that count): counters in three series of time slots.
--   stats1H:<slot>  5 s slots, kept 5 min     stats2H:<slot>  60 s slots, kept 2 h
--   stats3H:<slot>  600 s slots, kept 24 h    (<slot> = the slot's start, ms since the epoch)
-- Each counter is counted in total and per node group, pipeline and owner, as the fields
-- <name>, <name>|group=<g>, <name>|pipeline=<p>, <name>|owner=<o>. A key expires (PEXPIREAT) when its
-- slot is older than the series keeps.
local STATS_SERIES = {{'stats1H:', 5000, 300000}, {'stats2H:', 60000, 7200000}, {'stats3H:', 600000, 86400000}}

local function stats_tally(counts, name, group, pipeline, owner)
  for _, f in ipairs({name, name .. '|group=' .. (group or ''), name .. '|pipeline=' .. (pipeline or ''),
      name .. '|owner=' .. (owner or '')}) do
    counts[f] = (counts[f] or 0) + 1
  end
end

-- cmd is HINCRBY (counters) or HSET (sampled values: the last sample taken in a slot stands for it).
local function stats_apply(prefix, now, values, cmd)
  if next(values) == nil then
    return
  end
  now = tonumber(now)
  for _, s in ipairs(STATS_SERIES) do
    local slot = now - now % s[2]
    local key = prefix .. s[1] .. slot
    for f, v in pairs(values) do
      redis.call(cmd, key, f, v)
    end
    redis.call('PEXPIREAT', key, slot + s[2] + s[3])
  end
end

local function stats_write(prefix, now, counts)
  stats_apply(prefix, now, counts, 'HINCRBY')
end

local function stats_set(prefix, now, values)
  stats_apply(prefix, now, values, 'HSET')
end
