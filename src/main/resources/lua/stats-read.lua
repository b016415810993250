-- stats-read: the slots of the 60 s or 600 s stats series of one partition, with the counters of the 5 s
-- slots not folded into them yet (see lib/stats.lua and sample.lua): read in one script, so a fold cannot
-- fall between reading the marker and reading the slots.
-- KEYS[1] statsFold (the start of the last 5 s slot folded; none: nothing folded)
-- ARGV[1] the series' key prefix (Keys.statsPrefix(p, 2 or 3))   ARGV[2] the 5 s series' key prefix
-- ARGV[3] the series' slot length (ms)   ARGV[4] now (ms)   ARGV[5..] the starts of the slots to read
--   (the slot keys are known only from these starts and the prefixes)
-- Replies: one entry per slot asked for, in order: the slot's fields and values, flat (HGETALL's shape), the
-- counters of its 5 s slots after statsFold (that still exist: 5 min) added.
-- #include stats

local foldKey = KEYS[1]
local seriesPrefix, finePrefix, length, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local slotCount = #ARGV - 4
-- the start of slot i to read
local function slot_start(i) return ARGV[4 + i] end
local fine = STATS_SERIES[1][1]
local folded = tonumber(redis.call('GET', foldKey) or '')
-- 5 s slots older than the series keeps are gone: no need to look before
local oldest = now - now % fine - STATS_SERIES[1][2]
local replies = {}
for i = 1, slotCount do
  local start = tonumber(slot_start(i))
  local h = redis.call('HGETALL', seriesPrefix .. slot_start(i))
  local from = math.max(start, oldest, folded and (folded + fine) or start)
  local to = math.min(start + length - fine, now - now % fine)
  if from <= to then
    local sums, order = {}, {}
    for j = 1, #h, 2 do
      sums[h[j]] = tonumber(h[j + 1])
      order[#order + 1] = h[j]
    end
    for t = from, to, fine do
      local f = redis.call('HGETALL', finePrefix .. t)
      for j = 1, #f, 2 do
        if not stats_sampled(f[j]) then
          if sums[f[j]] == nil then
            order[#order + 1] = f[j]
          end
          sums[f[j]] = (sums[f[j]] or 0) + tonumber(f[j + 1])
        end
      end
    end
    h = {}
    for _, name in ipairs(order) do
      h[#h + 1] = name
      h[#h + 1] = tostring(sums[name])
    end
  end
  replies[#replies + 1] = h
end
return replies
