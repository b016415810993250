-- admin-event: records one entry of the audit log (an admin act through the API, the event bus, a bridge or the
-- command line; README, Audit log): an admin event on partition 0's eventsL, and the entry on auditX, the stream
-- the archive leader of partition 0 drains into the archive's audit table (it waits there while the archive is
-- down). auditX keeps at most ARGV[5] entries: past that the oldest go, and the reply says how many.
-- KEYS[1] eventsL of partition 0   KEYS[2] auditX
-- ARGV[1] now (ms)   ARGV[2] the node (or command line) that served the act   ARGV[3] its action
-- ARGV[4] the audit entry JSON {time, keyId, owner, action, target, outcome, status, error, remote, via, node, params}
-- ARGV[5] how many entries auditX keeps at most
-- Replies: how many of the oldest entries were dropped from auditX to keep it at ARGV[5] (0 as a rule)
-- #include events

local eventsKey, auditKey = KEYS[1], KEYS[2]
local now, node, action, details, cap = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
event_log(eventsKey, 'admin', now, node, action, cjson.decode(details))
redis.call('XADD', auditKey, '*', 'e', details)
return redis.call('XTRIM', auditKey, 'MAXLEN', cap)
