-- dequeue: hand up to N queued transactions of one group to a node, admin first, then out, then in.
-- KEYS[1] qAdminL:<group>   KEYS[2] qOutL:<group>   KEYS[3] qInL:<group>
-- KEYS[4] processingZ       KEYS[5] inflightZ:<nodeId>   KEYS[6] qRingL:<group>
-- ARGV[1] max (free worker slots)   ARGV[2] nodeId   ARGV[3] now (ms)
-- ARGV[4] key prefix: the popped txIds name their stateH keys, which cannot be known before the pop
-- ARGV[5] the group (for the stats: a transaction's first dequeue counts as started)
-- Replies: a list, one entry per transaction taken:
--   {txId, attempt, type, version, step, stepInput, owner, externalId, metadata, created, queue,
--    childStatus, childOutput, childNote, stepRetry, switches}
--   where queue is 'admin', 'out' or 'in', and the child fields are set when a child pipeline the
--   transaction waited for has ended (its result stands for the step at 'step').
-- A txId whose state is not 'queued' (a stale duplicate, or gone) is dropped from the queue.
-- Taking is recorded in processingZ and inflightZ:<nodeId> in the same script, so a node that dies
-- before it reads the reply leaves the work where the reaper finds it.
-- When the node took all it asked for and work remains, the ring gets a token so another idle node wakes.

-- #include stats

local max = tonumber(ARGV[1])
local counts = {}
local node, now, prefix = ARGV[2], ARGV[3], ARGV[4]
local names = {'admin', 'out', 'in'}
local taken = {}

for q = 1, 3 do
  while #taken < max do
    local want = max - #taken
    local ids = redis.call('LPOP', KEYS[q], want)
    if not ids then break end
    for _, id in ipairs(ids) do
      local key = prefix .. 'stateH:' .. id
      local s = redis.call('HMGET', key, 'processingState', 'type', 'version', 'step', 'data', 'input',
        'owner', 'externalId', 'metadata', 'created', 'childStatus', 'childOutput', 'childNote', 'stepRetry',
        'switches')
      if s[1] == 'queued' then
        local attempt = redis.call('HINCRBY', key, 'attempt', 1)
        if attempt == 1 then
          stats_tally(counts, 'started', ARGV[5], s[2], s[7])
        end
        redis.call('HSET', key, 'processingState', 'processing', 'node', node, 'updated', now)
        if s[15] then
          -- the step is about to see these switches: acknowledge them (see sleep.lua)
          local acks = {}
          for name, sw in pairs(cjson.decode(s[15])) do
            acks[name] = sw.seq
          end
          redis.call('HSET', key, 'acks', cjson.encode(acks))
        end
        redis.call('ZADD', KEYS[4], now, id)
        redis.call('ZADD', KEYS[5], now, id)
        taken[#taken + 1] = {id, attempt, s[2], s[3], s[4], s[5] or s[6], s[7], s[8], s[9], s[10], names[q],
          s[11] or '', s[12] or '', s[13] or '', s[14] or '0', s[15] or ''}
      end
    end
    if #ids < want then break end
  end
end

if #taken >= max and redis.call('LLEN', KEYS[6]) == 0 then
  if redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + redis.call('LLEN', KEYS[3]) > 0 then
    redis.call('RPUSH', KEYS[6], '1')
  end
end
stats_write(prefix, now, counts)
return taken
