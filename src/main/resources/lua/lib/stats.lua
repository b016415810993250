-- stats (included by the scripts that count): counters in three series of time slots, whose keys the
-- caller passes (it knows now, so it knows the slots):
--   stats1H:<slot>  5 s slots, kept 5 min     stats2H:<slot>  60 s slots, kept 2 h
--   stats3H:<slot>  600 s slots, kept 24 h    (<slot> = the slot's start, ms since the epoch)
-- statsKeys = {stats1H key, stats2H key, stats3H key} for the slots that hold now.
-- Each counter is counted in total and per node group, pipeline and owner, as the fields
-- <name>, <name>|group=<g>, <name>|pipeline=<p>, <name>|owner=<o>. A key expires (PEXPIREAT) when its
-- slot is older than the series keeps.
local STATS_SERIES = {{5000, 300000}, {60000, 7200000}, {600000, 86400000}}

local function stats_tally(counts, name, group, pipeline, owner)
  for _, f in ipairs({name, name .. '|group=' .. (group or ''), name .. '|pipeline=' .. (pipeline or ''),
      name .. '|owner=' .. (owner or '')}) do
    counts[f] = (counts[f] or 0) + 1
  end
end

-- cmd is HINCRBY (counters) or HSET (sampled values: the last sample taken in a slot stands for it).
local function stats_apply(statsKeys, now, values, cmd)
  if next(values) == nil then
    return
  end
  now = tonumber(now)
  for i, s in ipairs(STATS_SERIES) do
    local slot = now - now % s[1]
    if cmd == 'HSET' then
      -- one HSET sets every sampled field at once
      local args = {}
      for f, v in pairs(values) do
        args[#args + 1] = f
        args[#args + 1] = v
      end
      redis.call('HSET', statsKeys[i], unpack(args))
    else
      for f, v in pairs(values) do
        redis.call(cmd, statsKeys[i], f, v)
      end
    end
    redis.call('PEXPIREAT', statsKeys[i], slot + s[1] + s[2])
  end
end

local function stats_write(statsKeys, now, counts)
  stats_apply(statsKeys, now, counts, 'HINCRBY')
end

local function stats_set(statsKeys, now, values)
  stats_apply(statsKeys, now, values, 'HSET')
end
