-- sample: record queue lengths in the stats, and fold closed 5 s slots into the 60 s and 600 s series (the
-- reaper leader of the partition calls it once per 5 s slot).
-- KEYS[1] processingZ   KEYS[2] sleepingZ   KEYS[3..5] stats1H, stats2H, stats3H of the slots that hold now
-- KEYS[6] statsFold (the start of the last 5 s slot folded, see below)
-- For group i (1..n), three keys from KEYS[6 + 3(i-1) + 1]: qInZ:<group>, qOutL:<group>, qAdminL:<group>
-- ARGV[1] now (ms)   ARGV[2], ARGV[3], ARGV[4] the partition's stats1H, stats2H and stats3H key prefixes
--   (Keys.statsPrefix): the slots to fold are known only from statsFold and now
-- ARGV[4 + i] the name of group i
-- Replies: the number of fields written
-- Fields: queue.in|group=<g>, queue.out|group=<g>, queue.admin|group=<g> (lengths of qInZ, qOutL, qAdminL),
-- queue.in (their sum over the groups), processing (ZCARD processingZ), sleeping (ZCARD sleepingZ), in every
-- series. The last sample in a slot stands for it.
-- Counters are counted in the 5 s series only (lib/stats.lua). Each 5 s slot that closed more than
-- STATS_FOLD_LAG ago, and is after statsFold, is added to the 60 s and 600 s slots that hold it (its sampled
-- fields left out), at most 60 slots a call; statsFold then names it. With no statsFold the folding starts
-- at the newest slot due. Readers add the slots not yet folded (stats-read.lua).
-- #include stats

local processingKey, sleepingKey, stats1, stats2, stats3, foldKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local nowArg, series1Prefix, series2Prefix, series3Prefix = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local groupCount = #ARGV - 4
-- group i: its name, and its qInZ, qOutL and qAdminL keys
local function group_of(i)
  local k = 6 + 3 * (i - 1)
  return ARGV[4 + i], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
end

local now = tonumber(nowArg)
local values = {processing = redis.call('ZCARD', processingKey), sleeping = redis.call('ZCARD', sleepingKey)}
local total = 0
for i = 1, groupCount do
  local g, inKey, outKey, adminKey = group_of(i)
  local n = redis.call('ZCARD', inKey)
  total = total + n
  values['queue.in|group=' .. g] = n
  values['queue.out|group=' .. g] = redis.call('LLEN', outKey)
  values['queue.admin|group=' .. g] = redis.call('LLEN', adminKey)
end
values['queue.in'] = total
stats_set({stats1, stats2, stats3}, nowArg, values)

local due = stats_fold_due(now)
local folded = tonumber(redis.call('GET', foldKey) or '') or (due - STATS_SERIES[1][1])
local slots = 0
for t = folded + STATS_SERIES[1][1], due, STATS_SERIES[1][1] do
  if slots >= 60 then
    break
  end
  stats_fold(redis.call('HGETALL', series1Prefix .. t), t, {series2Prefix, series3Prefix})
  folded = t
  slots = slots + 1
end
redis.call('SET', foldKey, folded)

local n = 0
for _ in pairs(values) do
  n = n + 1
end
return n
