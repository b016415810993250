-- queue-upgrade: moves what an older version left on a group's in-queue list (qInL:<group>) onto its sorted
-- set (qInZ:<group>), in order and ahead of new work (scores 0.0005 ms apart from 0, as work taken back); the
-- list goes. A node runs it for its own group in every partition when it starts, so nothing queued before an
-- upgrade is stranded.
-- KEYS[1] qInL:<group> (the old list)   KEYS[2] qInZ:<group>   KEYS[3] qRingL:<group>
-- ARGV: none
-- Replies: how many transactions were moved (0 when there is no list)
-- #include publish
-- #include queue

if redis.call('TYPE', KEYS[1]).ok ~= 'list' then
  return 0
end
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
for i, id in ipairs(ids) do
  redis.call('ZADD', KEYS[2], string.format('%.4f', i * 0.0005), id)
end
redis.call('DEL', KEYS[1])
if #ids > 0 then
  queue_ring(KEYS[3], true)
end
return #ids
