-- resume: let an owner's paused transaction (pause.lua; with tree, what it waits for, down the chain) go on where
-- it stood. One parked by dequeue goes back on the queue it came from (pausedQueue); one parked by
-- checkpoint.lua is queued for its next step; a sleeper whose time fell due while paused (pausedWake, wake.lua)
-- is queued at once (timers fire) or sleeps on for the time it had left when paused (timers skip: the time paused
-- does not count, and a sleeper not due yet is moved as much later too). One whose step still runs (its pause
-- not reached yet) only loses the mark. See lib/pause.lua.
-- KEYS[1] stateH:<txId>   KEYS[2] phaseZ:paused (each one resumed leaves it)   KEYS[3] eventsL (one
--   tx-resumed event per call that resumed its root)   KEYS[4] sleepingZ
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] now (ms)   ARGV[4] by   ARGV[5] timers: 'fire' or 'skip'
-- ARGV[6] tree: '1' or '0'   ARGV[7] the stateH key prefix   ARGV[8] the most transactions to look at in this call
-- ARGV[9] the root ('' = txId; as pause.lua)
-- ARGV[10], ARGV[11], ARGV[12], ARGV[13] the partition's qInZ, qOutL, qAdminL and qRingL key prefixes: a parked
--   transaction's queue is known only from its state (its group)
-- Replies:
--   {'OK', resumed, left…}     resumed: how many went on here; left: as pause.lua's
--   {'NOT_PAUSED', status}     it is not paused (status running); nothing written
--   {'ALREADY_FINAL', status}  it has ended; nothing written
--   {'NOT_FOUND'}              no such transaction, or another owner's; nothing written
-- #include publish
-- #include codes
-- #include events
-- #include queue
-- #include pause

local key, pausedKey, eventsKey, sleepingKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local txId, owner, now, by, skip, tree = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5] == 'skip', ARGV[6] == '1'
local statePrefix, budget, root = ARGV[7], tonumber(ARGV[8]), ARGV[9] ~= '' and ARGV[9] or ARGV[1]
local inPrefix, outPrefix, adminPrefix, ringPrefix = ARGV[10], ARGV[11], ARGV[12], ARGV[13]

local s = redis.call('HMGET', key, 'processingState', 'status', 'owner', 'paused')
if not s[1] or s[3] ~= owner then
  return {CODE.NOT_FOUND}
end
if s[1] == 'complete' then
  return {CODE.ALREADY_FINAL, s[2]}
end
if not s[4] and root == txId then
  return {CODE.NOT_PAUSED, s[2]}
end

local resumed = 0
local fields = {'paused', 'pausedQueue', 'pausedWake', 'group', 'qBoost'}
local _, left = pause_walk(txId, tree, budget, statePrefix, fields, function(id, k, t)
  if not t[4] then
    return
  end
  local ok, mark = pcall(cjson.decode, t[4])
  local since = ok and type(mark) == 'table' and tonumber(mark.since) or tonumber(now)
  local shift = math.max(0, tonumber(now) - since)
  redis.call('HDEL', k, 'paused', 'pausedQueue', 'pausedWake')
  redis.call('HSET', k, 'updated', now)
  redis.call('ZREM', pausedKey, id)
  local ps, queue, due, group = t[1], t[5], tonumber(t[6]), t[7]
  local ring = ringPrefix .. group
  if ps == 'queued' and queue == 'admin' then
    queue_push(adminPrefix .. group, ring, id)
  elseif ps == 'queued' and queue == 'out' then
    queue_push(outPrefix .. group, ring, id)
  elseif ps == 'queued' and queue then
    queue_push_in(inPrefix .. group, ring, id, now, t[8])
  elseif (ps == 'sleeping' or ps == 'scheduled') and due then
    if skip then
      redis.call('ZADD', sleepingKey, string.format('%d', due + shift), id)
      if ps == 'scheduled' then
        redis.call('HSET', k, 'startAt', string.format('%d', due + shift)) -- what the summary shows moves too
      end
    else
      redis.call('HSET', k, 'processingState', 'queued')
      queue_push_in(inPrefix .. group, ring, id, now, t[8])
    end
  elseif (ps == 'sleeping' or ps == 'scheduled') and skip then
    local at = tonumber(redis.call('ZSCORE', sleepingKey, id))
    if at then
      redis.call('ZADD', sleepingKey, string.format('%d', at + shift), id)
      if ps == 'scheduled' then
        redis.call('HSET', k, 'startAt', string.format('%d', at + shift))
      end
    end
  end
  resumed = resumed + 1
end)
if resumed > 0 and root == txId then
  event_log(eventsKey, 'tx-resumed', now, '', txId, {txId = txId, owner = owner, by = by, timers = skip and 'skip'
    or 'fire', resumed = resumed, tree = tree})
end
local reply = {CODE.OK, resumed}
for _, id in ipairs(left) do
  reply[#reply + 1] = id
end
return reply
