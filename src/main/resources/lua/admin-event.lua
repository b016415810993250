-- admin-event: logs an admin event (one entry of the audit log: an admin act through the API, the CLI or a bridge)
-- on partition 0's eventsL, as the node writes it to the archive's audit table (README, Audit log).
-- KEYS[1] eventsL of partition 0
-- ARGV[1] now (ms)   ARGV[2] the node that served the act   ARGV[3] its action (the route, METHOD /template)
-- ARGV[4] details JSON: the audit entry {time, keyId, owner, action, target, outcome, status, error, remote, via,
--   node, params}
-- Replies: 1
-- #include events

local eventsKey = KEYS[1]
local now, node, action, details = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
event_log(eventsKey, 'admin', now, node, action, cjson.decode(details))
return 1
