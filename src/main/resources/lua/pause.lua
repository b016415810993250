-- pause: stop an owner's transaction where it stands (and, with tree, what it waits for: its children and
-- branches, down the chain) until resume.lua. A running one finishes its step (its result is kept) and is parked
-- by checkpoint.lua before the next; a queued one is parked by dequeue.lua when its turn comes; a sleeping,
-- retrying, waiting or delayed one stays where it is and wake.lua parks it when its time comes (keeping the
-- time for resume: fire or skip). Parked, it holds no worker and no concurrency slot. A child or branch its
-- running step starts after the pause (with tree) starts paused too (lib/child.lua). See lib/pause.lua.
-- KEYS[1] stateH:<txId>   KEYS[2] phaseZ:paused (a search index: each one paused here is added, by created)
-- KEYS[3] eventsL (one tx-paused event per call that paused its root)
-- ARGV[1] txId   ARGV[2] owner asking   ARGV[3] now (ms)   ARGV[4] by (who asks: the key's owner)
-- ARGV[5] reason ('' when none)   ARGV[6] tree: '1' or '0'
-- ARGV[7] the stateH key prefix (Keys.stateH("")): the children and branches are known only from the states
-- ARGV[8] the most transactions to look at in this call   ARGV[9] the root the caller paused ('' = txId: the
--   call for a descendant left over by an earlier call names its root, and logs no event)
-- Replies:
--   {'OK', paused, left…}      paused: how many were paused here (0: all were paused already: idempotent);
--                              left: txIds of the tree not reached yet (call again for each, with ARGV[9])
--   {'ALREADY_FINAL', status}  it has ended; nothing written
--   {'NOT_FOUND'}              no such transaction, or another owner's; nothing written
-- #include codes
-- #include events
-- #include pause

local key, pausedKey, eventsKey = KEYS[1], KEYS[2], KEYS[3]
local txId, owner, now, by, reason, tree = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6] == '1'
local statePrefix, budget, root = ARGV[7], tonumber(ARGV[8]), ARGV[9] ~= '' and ARGV[9] or ARGV[1]

local s = redis.call('HMGET', key, 'processingState', 'status', 'owner')
if not s[1] or s[3] ~= owner then
  return {CODE.NOT_FOUND}
end
if s[1] == 'complete' then
  return {CODE.ALREADY_FINAL, s[2]}
end

local mark = cjson.encode({since = tonumber(now), by = by, reason = reason, root = root, tree = tree})
local paused = 0
local _, left = pause_walk(txId, tree, budget, statePrefix, {'paused', 'created'}, function(id, k, t)
  if not t[4] then
    redis.call('HSET', k, 'paused', mark, 'updated', now)
    if t[5] then
      redis.call('ZADD', pausedKey, t[5], id)
    end
    paused = paused + 1
  end
end)
if paused > 0 and root == txId then
  event_log(eventsKey, 'tx-paused', now, '', txId, {txId = txId, owner = owner, by = by, reason = reason,
    paused = paused, tree = tree})
end
local reply = {CODE.OK, paused}
for _, id in ipairs(left) do
  reply[#reply + 1] = id
end
return reply
