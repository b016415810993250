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
-- #include schedule

local key, idsKey, schedulesKey = KEYS[1], KEYS[2], KEYS[3]
local action, id, now = ARGV[1], ARGV[2], ARGV[3]
-- ARGV[4..6] by action: put's definition, publication time and paused flag; state's pause flag, by whom, why
local definition, publishedAt, configPaused = ARGV[4], ARGV[5], ARGV[6]
local pause, by, why = ARGV[4], ARGV[5], ARGV[6]
local nextFire, score = ARGV[7], ARGV[8]

if action == 'put' then
  local at = redis.call('HGET', key, 'publishedAt')
  if at and tonumber(at) >= tonumber(publishedAt) then
    return {CODE.KEPT, at}
  end
  redis.call('HSET', key, 'definition', definition, 'publishedAt', publishedAt, 'updated', now, 'paused', configPaused,
    'pausedBy', configPaused == '1' and 'config' or '', 'pauseReason', '')
  redis.call('SADD', idsKey, id)
  schedule_place(schedulesKey, key, id, configPaused == '1' and '' or nextFire, score)
  return {CODE.OK}
end
if redis.call('EXISTS', key) == 0 then
  return {CODE.NOT_FOUND}
end
if action == 'state' then
  redis.call('HSET', key, 'paused', pause, 'pausedBy', pause == '1' and by or '',
    'pauseReason', pause == '1' and why or '', 'updated', now)
  schedule_place(schedulesKey, key, id, pause == '1' and '' or nextFire, score)
  return {CODE.OK}
end
if action == 'delete' then
  redis.call('DEL', key)
  redis.call('SREM', idsKey, id)
  redis.call('ZREM', schedulesKey, id)
  return {CODE.OK}
end
return redis.error_reply('ERR schedule-put: unknown action ' .. tostring(action))
