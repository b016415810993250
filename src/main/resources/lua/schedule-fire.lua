-- schedule-fire: the scheduler leader moves due fires into the purgatory and each schedule on to its next fire
-- time, in one call: a crash after it leaves the fires where the next leader drives them (schedule-due), a crash
-- before it leaves the schedules due, so no fire is lost; a fire is only ever added to the purgatory once.
-- KEYS[1] schedulesZ   KEYS[2] schedulePurgatoryZ   KEYS[3] scheduleLock1   KEYS[3 + i] scheduleH:<id of entry i>
-- ARGV[1] nodeId   ARGV[2] now (ms)
-- For entry i, six args from ARGV[2 + 6(i-1) + 1]: id, the planned fire it was due at (ms; checked against the
--   schedule's nextFire, so a fire a former leader moved already is not moved twice), its next fire time (ms)
--   or '' for none, that fire's score (plus jitter) or '', fires missed (counted), and the fires to run now
--   (comma-separated ms, may be '')
-- Replies: {leader (1 or 0), then 1 or 0 per entry: moved, or not (no longer due at that fire)}
-- #include codes
-- #include schedule

local schedulesKey, purgatoryKey, lockKey = KEYS[1], KEYS[2], KEYS[3]
local nodeId, now = ARGV[1], ARGV[2]
local entryCount = #KEYS - 3
-- entry i: its scheduleH key, then id, planned, next, score, misses, fires
local function entry_of(i)
  local a = 2 + 6 * (i - 1)
  return KEYS[3 + i], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6]
end

if redis.call('GET', lockKey) ~= nodeId then
  return {0}
end
local out = {1}
for i = 1, entryCount do
  local key, id, planned, next, score, misses, fires = entry_of(i)
  if redis.call('HGET', key, 'nextFire') ~= planned then
    out[#out + 1] = 0
  else
    schedule_place(schedulesKey, key, id, next, score)
    for fire in string.gmatch(fires, '[^,]+') do
      redis.call('ZADD', purgatoryKey, 'NX', now, id .. '@' .. fire)
    end
    if tonumber(misses) > 0 then
      redis.call('HINCRBY', key, 'misses', misses)
    end
    out[#out + 1] = 1
  end
end
return out
