-- schedule-due: the scheduler leader's round. Takes or renews the partition's scheduler lease; if the caller
-- leads, answers the schedules whose fire is due and the fires left in the purgatory too long.
-- KEYS[1] schedulesZ   KEYS[2] schedulePurgatoryZ   KEYS[3] scheduleLock1   KEYS[4] scheduleLock2
-- ARGV[1] nodeId   ARGV[2] now (ms)   ARGV[3] lease (ms)   ARGV[4] grace (ms)   ARGV[5] most of each kind
-- ARGV[6] the scheduleH key prefix (Keys.scheduleH("")): the due schedules are known only once schedulesZ
--   is read   ARGV[7] how long a fire stays in the purgatory before it is driven again (ms)
-- ARGV[8] '1' when the caller may take the lease (the partition is assigned to it), else '0'
-- A caller that takes the lease now (it did not hold it) drives every fire in the purgatory at once: the leader
-- before it is gone, and what it held waits for nobody else.
-- Replies: {leader (1 or 0), due, redrive} where due lists {id, planned fire (ms), definition, lastTxId,
--   queuedFire (a fire waiting behind the last run, overlap queueOne) or ''}
--   and redrive lists {member "<id>@<fire ms>", definition or '', lastTxId}. A fire driven again has its score
--   set to now, so it waits another ARGV[7] before the next time.
-- #include lease

local schedulesKey, purgatoryKey, lock1, lock2 = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local nodeId, now, lease, grace, max, prefix = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
local redriveAfter, mayTake = ARGV[7], ARGV[8]
local fresh = redis.call('GET', lock1) ~= nodeId
local leads = lease_hold(lock1, lock2, nodeId, lease, grace, mayTake == '1')
if not leads then
  return {0, {}, {}}
end
local due = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', schedulesKey, '-inf', now, 'LIMIT', 0, max)) do
  local s = redis.call('HMGET', prefix .. id, 'nextFire', 'definition', 'lastTxId', 'queuedFire')
  if s[1] and s[2] then
    due[#due + 1] = {id, s[1], s[2], s[3] or '', s[4] or ''}
  else
    redis.call('ZREM', schedulesKey, id) -- deleted meanwhile
  end
end
local redrive = {}
local cutoff = fresh and now or now - tonumber(redriveAfter)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', purgatoryKey, '-inf', cutoff, 'LIMIT', 0, max)) do
  redis.call('ZADD', purgatoryKey, now, member)
  local id = string.match(member, '^(.*)@%d+$')
  local s = redis.call('HMGET', prefix .. (id or ''), 'definition', 'lastTxId')
  redrive[#redrive + 1] = {member, s[1] or '', s[2] or ''}
end
return {1, due, redrive}
