-- complete: give running transactions their final status and output, schedule archiving, and notify.
-- Takes a batch: a node completes everything that finished since its last call in one round trip.
-- KEYS[1] processingZ   KEYS[2] inflightZ:<nodeId>   KEYS[3] toArchiveZ   KEYS[4] notify (channel)
-- KEYS[5] webhooksZ   KEYS[6..8] stats1H, stats2H, stats3H of the slots that hold now
-- For transaction i (1..n), two keys from KEYS[8 + 2(i-1) + 1]: stateH:<txId>, webhookH:<txId>
-- ARGV[1] now (ms)   ARGV[2] archive delay (ms)
-- ARGV[3], ARGV[4], ARGV[5] the stateH, qOutL and qRingL key prefixes (Keys.stateH(""), …): a completed
--   child's parent, and the parent's group, are known only from the child's state, so the parent's keys
--   are built from them
-- ARGV[5 + 6(i-1) ..] for transaction i: txId, attempt the node was given, status (success, failed,
--   aborted, cancelled, timeout, internal-error), output JSON or '', note or '', the last step's time
--   ("step:startMs:durationMs", appended to stepTimes) or ''
-- Replies: a list with one code per transaction, in order:
--   'OK'          written (or written before by this same attempt with this same status: a retry)
--   'NOT_FOUND'   no such transaction
--   'BAD_STATUS'  not a final status
--   'FENCED'      the caller no longer owns the transaction (a later attempt, or not processing); nothing written
-- Each completion is published on notify as completed:<txId>:<status>:<owner>; one with a webhook URL is
-- scheduled for delivery (see lib/webhooks.lua). A completed child pipeline hands its status, output and
-- note to its parent, if the parent still waits for it, and queues the parent on qOutL of the parent's
-- group. Each completion counts as completed and completed.<status> in the stats.
-- #include codes
-- #include queue
-- #include webhooks
-- #include stats

local finals = {success = 1, failed = 1, aborted = 1, cancelled = 1, timeout = 1, ['internal-error'] = 1}
local now = ARGV[1]
local statePrefix, outPrefix, ringPrefix = ARGV[3], ARGV[4], ARGV[5]
local archiveAt = tonumber(now) + tonumber(ARGV[2])
local replies = {}
local counts = {}

local function wakeParent(parent, group, child, status, output, note)
  local pkey = statePrefix .. parent
  local p = redis.call('HMGET', pkey, 'processingState', 'waitingFor')
  if p[1] ~= 'sleeping' or p[2] ~= child then
    return
  end
  redis.call('HSET', pkey, 'processingState', 'queued', 'childStatus', status, 'childOutput', output,
    'childNote', note, 'updated', now)
  queue_push(outPrefix .. group, ringPrefix .. group, parent)
end

for i = 1, (#KEYS - 8) / 2 do
  local key, webhookKey = KEYS[8 + 2 * (i - 1) + 1], KEYS[8 + 2 * (i - 1) + 2]
  local a = 5 + 6 * (i - 1) + 1
  local id, attempt, status = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  local s = redis.call('HMGET', key, 'attempt', 'processingState', 'status', 'owner', 'parentTxId', 'parentGroup',
    'group', 'type')
  if not finals[status] then
    replies[i] = CODE.BAD_STATUS
  elseif not s[1] then
    replies[i] = CODE.NOT_FOUND
  elseif s[1] == attempt and s[2] == 'complete' and s[3] == status then
    replies[i] = CODE.OK
  elseif s[1] ~= attempt or s[2] ~= 'processing' then
    replies[i] = CODE.FENCED
  else
    redis.call('HSET', key, 'status', status, 'processingState', 'complete', 'output', ARGV[a + 3],
      'note', ARGV[a + 4], 'completed', now, 'updated', now)
    redis.call('HDEL', key, 'data', 'childStatus', 'childOutput', 'childNote', 'waitingFor')
    if ARGV[a + 5] ~= '' then
      redis.call('HSET', key, 'stepTimes', (redis.call('HGET', key, 'stepTimes') or '') .. ARGV[a + 5] .. ';')
    end
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    redis.call('ZADD', KEYS[3], archiveAt, id)
    redis.call('PUBLISH', KEYS[4], 'completed:' .. id .. ':' .. status .. ':' .. (s[4] or ''))
    webhooks_schedule(key, webhookKey, KEYS[5], KEYS[4], id, now)
    stats_tally(counts, 'completed', s[7], s[8], s[4])
    stats_tally(counts, 'completed.' .. status, s[7], s[8], s[4])
    if s[5] then
      wakeParent(s[5], s[6], id, status, ARGV[a + 3], ARGV[a + 4])
    end
    replies[i] = CODE.OK
  end
end
stats_write({KEYS[6], KEYS[7], KEYS[8]}, now, counts)
return replies
