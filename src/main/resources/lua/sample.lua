-- sample: record queue lengths in the stats (the reaper leader calls it every round).
-- KEYS[1] processingZ   KEYS[2] sleepingZ   KEYS[3..5] stats1H, stats2H, stats3H of the slots that hold now
-- For group i (1..n), three keys from KEYS[5 + 3(i-1) + 1]: qInZ:<group>, qOutL:<group>, qAdminL:<group>
-- ARGV[1] now (ms)   ARGV[1 + i] the name of group i
-- Replies: the number of fields written
-- Fields: queue.in|group=<g>, queue.out|group=<g>, queue.admin|group=<g> (lengths of qInZ, qOutL, qAdminL),
-- queue.in (their sum over the groups), processing (ZCARD processingZ), sleeping (ZCARD sleepingZ). The
-- last sample in a slot stands for it.
-- #include stats

local values = {processing = redis.call('ZCARD', KEYS[1]), sleeping = redis.call('ZCARD', KEYS[2])}
local total = 0
for i = 1, #ARGV - 1 do
  local g, k = ARGV[1 + i], 5 + 3 * (i - 1)
  local n = redis.call('ZCARD', KEYS[k + 1])
  total = total + n
  values['queue.in|group=' .. g] = n
  values['queue.out|group=' .. g] = redis.call('LLEN', KEYS[k + 2])
  values['queue.admin|group=' .. g] = redis.call('LLEN', KEYS[k + 3])
end
values['queue.in'] = total
stats_set({KEYS[3], KEYS[4], KEYS[5]}, ARGV[1], values)
local n = 0
for _ in pairs(values) do
  n = n + 1
end
return n
