-- trim: keep a partition's operational lists within their bounds (the reaper leader of the partition, once per
-- stats slot): events older than a time leave the old end of eventsL (at most 1000 a call), and exceptionZ keeps
-- its newest entries only (a transaction set aside keeps its state; only the list of them is bounded).
-- KEYS[1] eventsL   KEYS[2] exceptionZ
-- ARGV[1] the oldest event time (ms) kept   ARGV[2] the most exceptionZ entries kept
-- Replies: {events dropped, exceptionZ entries dropped}

local eventsKey, exceptionKey = KEYS[1], KEYS[2]
local oldest, keep = ARGV[1], ARGV[2]
local dropped = 0
while dropped < 1000 do
  local last = redis.call('LINDEX', eventsKey, -1)
  if not last then
    break
  end
  local ok, e = pcall(cjson.decode, last)
  if ok and type(e) == 'table' and tonumber(e.time) and tonumber(e.time) >= tonumber(oldest) then
    break
  end
  redis.call('RPOP', eventsKey)
  dropped = dropped + 1
end
local exceptions = redis.call('ZREMRANGEBYRANK', exceptionKey, 0, -(tonumber(keep) + 1))
return {dropped, exceptions}
