-- sample: record queue lengths in the stats (the reaper leader calls it every round).
-- KEYS[1] processingZ   KEYS[2] sleepingZ
-- ARGV[1] now (ms)   ARGV[2] key prefix   ARGV[3..] the node groups to sample
-- Replies: the number of fields written
-- Fields: queue.in|group=<g>, queue.out|group=<g>, queue.admin|group=<g> (lengths of qInL, qOutL, qAdminL),
-- queue.in (their sum over the groups), processing (ZCARD processingZ), sleeping (ZCARD sleepingZ). The
-- last sample in a slot stands for it.
-- #include stats

local prefix = ARGV[2]
local values = {processing = redis.call('ZCARD', KEYS[1]), sleeping = redis.call('ZCARD', KEYS[2])}
local total = 0
for i = 3, #ARGV do
  local g = ARGV[i]
  local n = redis.call('LLEN', prefix .. 'qInL:' .. g)
  total = total + n
  values['queue.in|group=' .. g] = n
  values['queue.out|group=' .. g] = redis.call('LLEN', prefix .. 'qOutL:' .. g)
  values['queue.admin|group=' .. g] = redis.call('LLEN', prefix .. 'qAdminL:' .. g)
end
values['queue.in'] = total
stats_set(prefix, ARGV[1], values)
local n = 0
for _ in pairs(values) do
  n = n + 1
end
return n
