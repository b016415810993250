-- lease: is the caller the leader of a role (reaper, archive, webhooks)? Takes or renews the two-key lease.
-- KEYS[1] <role>Lock1 (the leader's nodeId for the lease)   KEYS[2] <role>Lock2 (the same for lease + grace)
-- ARGV[1] nodeId   ARGV[2] lease (ms)   ARGV[3] grace (ms)
-- Replies:
--   1   the caller leads: it held lock1 (renewed), or neither key existed (taken)
--   0   another node leads, or only lock2 remains: nobody leads until it expires (the old leader may
--       still be finishing its last batch)

local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or (not holder and redis.call('EXISTS', KEYS[2]) == 0) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', tonumber(ARGV[2]) + tonumber(ARGV[3]))
  return 1
end
return 0
