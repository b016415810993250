-- schedule-done: what became of fires the scheduler leader drove out of the purgatory.
-- KEYS[1] schedulePurgatoryZ   KEYS[2] schedulesZ   KEYS[3] eventsL   KEYS[3 + i] scheduleH:<id of fire i>
-- ARGV[1] now (ms)
-- For fire i, five args from ARGV[1 + 5(i-1) + 1]: its member "<id>@<fire ms>", the fire time (ms), outcome,
--   the txId it started (or the one it waits behind) or '', a note or ''. Outcomes:
--   started   a transaction runs for it (or ran: a start that found its externalId taken is this fire's)
--   skipped   overlap skip: the previous run had not ended (counted in skipped)
--   queued    overlap queueOne: it waits in the purgatory until the previous run ends (driven again then)
--   dropped   its schedule is gone
--   paused    its pipeline is gone or disabled: the schedule is paused by the system (event schedule-paused)
-- Replies: the number of fires that left the purgatory
-- #include events

local purgatoryKey, schedulesKey, eventsKey = KEYS[1], KEYS[2], KEYS[3]
local now = ARGV[1]
local fireCount = #KEYS - 3
-- fire i: its scheduleH key, then member, fire, outcome, txId, note
local function fire_of(i)
  local a = 1 + 5 * (i - 1)
  return KEYS[3 + i], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
end

local left = 0
for i = 1, fireCount do
  local key, member, fire, outcome, txId, note = fire_of(i)
  if outcome == 'queued' then
    redis.call('ZADD', purgatoryKey, 'XX', now, member)
    redis.call('HSET', key, 'queuedFire', fire)
  else
    left = left + redis.call('ZREM', purgatoryKey, member)
    if outcome == 'started' and redis.call('EXISTS', key) == 1 then
      redis.call('HSET', key, 'lastTxId', txId, 'lastFire', fire, 'lastStarted', now)
      redis.call('HINCRBY', key, 'fires', 1)
      if redis.call('HGET', key, 'queuedFire') == fire then
        redis.call('HDEL', key, 'queuedFire')
      end
    elseif outcome == 'skipped' and redis.call('EXISTS', key) == 1 then
      redis.call('HINCRBY', key, 'skipped', 1)
    elseif outcome == 'paused' and redis.call('EXISTS', key) == 1 then
      local id = string.match(member, '^(.*)@%d+$')
      redis.call('HSET', key, 'paused', '1', 'pausedBy', 'system', 'pauseReason', note, 'updated', now)
      redis.call('HDEL', key, 'nextFire')
      redis.call('ZREM', schedulesKey, id)
      event_log(eventsKey, 'schedule-paused', now, '', id, {scheduleId = id, reason = note})
    end
  end
end
return left
