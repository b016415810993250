-- lease: is the caller the leader of a role (reaper, archive, webhooks)? Takes or renews the two-key lease.
-- KEYS[1] <role>Lock1 (the leader's nodeId for the lease)   KEYS[2] <role>Lock2 (the same for lease + grace)
-- ARGV[1] nodeId   ARGV[2] lease (ms)   ARGV[3] grace (ms)
-- Replies:
--   1   the caller leads: it held lock1 (renewed), or neither key existed (taken), or only lock2 remains
--       and names the caller (its own lease lapsed; nobody else can have led since, so it goes on)
--   0   another node leads, or only lock2 remains for another node: nobody leads until it expires (that
--       old leader may still be finishing its last batch)

local lock1, lock2 = KEYS[1], KEYS[2]
local node, lease, grace = ARGV[1], ARGV[2], ARGV[3]

-- #include lease

return lease_hold(lock1, lock2, node, lease, grace, true) and 1 or 0
