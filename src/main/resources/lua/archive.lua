-- archive: confirm what the caller has written to the archive (only now is it deleted from Redis), then,
-- if the caller leads the archive role, hand out the next batch of due, finished transactions.
-- KEYS[1] toArchiveZ   KEYS[2] toArchiveLock1   KEYS[3] toArchiveLock2   KEYS[4] exceptionZ
-- KEYS[5] liveZ (the search index: what is deleted here leaves it)
-- KEYS[6..8] phaseZ:ended, phaseZ:retrying, phaseZ:waiting (the phase indexes: likewise)
-- KEYS[8 + i] stateH:<txId> of the i-th transaction the caller wrote
-- ARGV[1] nodeId   ARGV[2] now (ms)   ARGV[3] batch size (0: confirm only)   ARGV[4] lease (ms)
-- ARGV[5] grace (ms)   ARGV[6] the stateH key prefix (Keys.stateH("")): the due transactions are known only
--   once toArchiveZ is read, so their keys are the prefix and the txId
-- ARGV[7] how long (ms) a handed-out transaction is held for the leader before it is due again
-- ARGV[8 + 2(i-1)], ARGV[9 + 2(i-1)]: the i-th transaction the caller wrote, and the stamp it was handed out with
-- Replies: {leader (1 or 0), confirmed (count), then per handed-out transaction: txId, stamp, {field, value, …}}
-- A handed-out transaction is rescheduled to now + hold (twice the caller's write timeout plus its lease:
-- it may wait for the write before it, then be written) before it is handed out, so the leader can fetch the next batch while it writes this one, even a slow write; if
-- the leader dies, it is due again once the write it was in can no longer be running. A confirmed transaction whose state changed after it was handed out (its stamp differs) is
-- not deleted: it is due again at once, so the archive always ends with its last state (unless it runs
-- again, rerun.lua: its next completion schedules it). One that is due
-- but not finished cannot be (only complete and cancel schedule archiving): it leaves toArchiveZ for
-- exceptionZ, never for the archive. One that is finished but waits for its compensation leaves toArchiveZ
-- too (a rerun's earlier run left it there): the compensation's end schedules it again. The lease is the two-key
-- protocol of lib/lease.lua.
-- #include lease

local toArchiveKey, lock1, lock2, exceptionKey, liveKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local nodeId, now, batch, lease, grace, statePrefix, holdFor = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5],
  ARGV[6], ARGV[7]
local phaseKeys = {KEYS[6], KEYS[7], KEYS[8]}
local writtenCount = #KEYS - 8
-- written transaction i: its stateH key, txId, and the stamp it was handed out with
local function written_of(i)
  return KEYS[8 + i], ARGV[8 + 2 * (i - 1)], ARGV[9 + 2 * (i - 1)]
end

local function stamp(key)
  local s = redis.call('HMGET', key, 'updated', 'rev')
  return (s[1] or '') .. '/' .. (s[2] or '0')
end

-- a finished transaction whose compensation still runs is not archived yet: the compensation's end schedules it
-- (lib/compensate.lua), so a stale toArchiveZ entry (a rerun's earlier run) must not archive it meanwhile
local function compensating(key)
  local c = redis.call('HGET', key, 'compensation')
  return c ~= false and c ~= nil and cjson.decode(c).status == 'running'
end

local confirmed = 0
local gone = {}
for i = 1, writtenCount do
  local key, id, handed = written_of(i)
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZREM', toArchiveKey, id)
    gone[#gone + 1] = id
  elseif stamp(key) == handed then
    redis.call('DEL', key)
    redis.call('ZREM', toArchiveKey, id)
    gone[#gone + 1] = id
    confirmed = confirmed + 1
  elseif redis.call('HGET', key, 'processingState') == 'complete' and not compensating(key) then
    redis.call('ZADD', toArchiveKey, now, id)
  else
    redis.call('ZREM', toArchiveKey, id)
  end
end
for from = 1, #gone, 1000 do
  local chunk = {unpack(gone, from, math.min(from + 999, #gone))}
  redis.call('ZREM', liveKey, unpack(chunk))
  for _, phaseKey in ipairs(phaseKeys) do
    redis.call('ZREM', phaseKey, unpack(chunk))
  end
end

-- a call that only confirms or records (ARGV[3] = 0) renews a lease it holds but never takes a free one:
-- a node that is stopping must not end up leading
if not lease_hold(lock1, lock2, nodeId, lease, grace, batch > 0) then
  return {0, confirmed}
end

local reply = {1, confirmed}
if batch > 0 then
  local due = redis.call('ZRANGEBYSCORE', toArchiveKey, '-inf', now, 'LIMIT', 0, batch)
  for _, id in ipairs(due) do
    local key = statePrefix .. id
    local state = redis.call('HGET', key, 'processingState')
    if not state then
      redis.call('ZREM', toArchiveKey, id)
    elseif state ~= 'complete' then
      redis.call('ZREM', toArchiveKey, id)
      redis.call('ZADD', exceptionKey, now, id)
    elseif compensating(key) then
      redis.call('ZREM', toArchiveKey, id)
    else
      redis.call('ZADD', toArchiveKey, tonumber(now) + tonumber(holdFor), id)
      reply[#reply + 1] = id
      reply[#reply + 1] = stamp(key)
      reply[#reply + 1] = redis.call('HGETALL', key)
    end
  end
end
return reply
