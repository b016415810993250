-- schedule-put: publish a schedule, pause or resume it, or delete it (admin API; schedule files at node start).
-- KEYS[1] scheduleH:<id>   KEYS[2] schedulesS   KEYS[3] schedulesZ
-- ARGV[1] action: put | state | delete   ARGV[2] id   ARGV[3] now (ms)
--   put:   ARGV[4] definition JSON   ARGV[5] when it was published (ms: an upload's time, a file's last change)
--          ARGV[6] '1' when the definition says paused   ARGV[7] its next fire time (ms) or '' for none
--          ARGV[8] that fire's score in schedulesZ (the fire time plus its jitter)
--   state: ARGV[4] '1' pause, '0' resume   ARGV[5] by whom (an API key's owner, config, system)
--          ARGV[6] why or ''   ARGV[7] the next fire time (ms; resume) or ''   ARGV[8] its score or ''
--   delete: nothing more
-- Replies: {'OK'}; {'KEPT', publishedAt} (put: a newer publication is current, nothing written);
--   {'NOT_FOUND'} (state, delete: no such schedule)
-- The newest publication wins, as for pipelines: a node that starts with an older file never undoes an
-- upload. What a schedule has run (lastTxId, lastFire, fires, misses, skipped) outlives a new publication.
-- A fire already in the purgatory stays there: its leader drives it to the end.
-- #include codes

local action, id, now = ARGV[1], ARGV[2], ARGV[3]
local function place(next, score)
  if next == '' then
    redis.call('ZREM', KEYS[3], id)
    redis.call('HDEL', KEYS[1], 'nextFire')
  else
    redis.call('ZADD', KEYS[3], score, id)
    redis.call('HSET', KEYS[1], 'nextFire', next)
  end
end

if action == 'put' then
  local at = redis.call('HGET', KEYS[1], 'publishedAt')
  if at and tonumber(at) >= tonumber(ARGV[5]) then
    return {CODE.KEPT, at}
  end
  redis.call('HSET', KEYS[1], 'definition', ARGV[4], 'publishedAt', ARGV[5], 'updated', now, 'paused', ARGV[6],
    'pausedBy', ARGV[6] == '1' and 'config' or '', 'pauseReason', '')
  redis.call('SADD', KEYS[2], id)
  place(ARGV[6] == '1' and '' or ARGV[7], ARGV[8])
  return {CODE.OK}
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {CODE.NOT_FOUND}
end
if action == 'state' then
  redis.call('HSET', KEYS[1], 'paused', ARGV[4], 'pausedBy', ARGV[4] == '1' and ARGV[5] or '',
    'pauseReason', ARGV[4] == '1' and ARGV[6] or '', 'updated', now)
  place(ARGV[4] == '1' and '' or ARGV[7], ARGV[8])
  return {CODE.OK}
end
if action == 'delete' then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  return {CODE.OK}
end
return redis.error_reply('ERR schedule-put: unknown action ' .. tostring(action))
