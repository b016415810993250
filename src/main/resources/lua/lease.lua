-- lease: is the caller the leader of a role (reaper, archive, webhooks)? Takes or renews the two-key lease.
-- KEYS[1] <role>Lock1 (the leader's nodeId for the lease)   KEYS[2] <role>Lock2 (the same for lease + grace)
-- ARGV[1] nodeId   ARGV[2] lease (ms)   ARGV[3] grace (ms)
-- Replies:
--   1   the caller leads: it held lock1 (renewed), or neither key existed (taken), or only lock2 remains
--       and names the caller (its own lease lapsed; nobody else can have led since, so it goes on)
--   0   another node leads, or only lock2 remains for another node: nobody leads until it expires (that
--       old leader may still be finishing its last batch)

local holder = redis.call('GET', KEYS[1])
local marker = redis.call('GET', KEYS[2])
if holder == ARGV[1] or (not holder and (not marker or marker == ARGV[1])) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', tonumber(ARGV[2]) + tonumber(ARGV[3]))
  return 1
end
return 0
