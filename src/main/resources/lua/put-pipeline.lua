-- put-pipeline: publish a pipeline definition; every version stays readable for transactions started on it.
-- The newest publication wins: one not newer than the current version's (a node starting with a pipeline file
-- last changed before a version an admin uploaded) stores its definition but leaves the current version.
-- KEYS[1] pipelineH:<name>   KEYS[2] pipelineVersionsH:<name> (version → definition, and at:<version> → when
--   that version was first published, ms: the console lists versions by it)   KEYS[3] pipelinesS (every pipeline's name)
-- ARGV[1] version (hash of the definition)   ARGV[2] node group   ARGV[3] '1' if a transaction type, else '0'
-- ARGV[4] definition JSON   ARGV[5] now (ms)   ARGV[6] name   ARGV[7] its onFailure pipeline or ''
-- ARGV[8] when this publication was made (ms): an upload's time, or the pipeline file's last change
-- ARGV[9] its default priority (0-9) for starts that name none
-- ARGV[10] its rate limit in transactions per second (dequeue.lua holds back what exceeds it), or '' for none
-- ARGV[11] its maxConcurrency (how many may run at once; dequeue.lua holds back the rest), or '' for none
-- ARGV[12] its gate ({"<debounce|throttle|singleton>": {...}} as Pipeline.gateText writes it) or '' (start.lua)
-- ARGV[13] its rollout share (1-99: it becomes the canary, taking that % of new starts, and the version current
--   before stays the stable one for the rest: lib/rollout.lua; during a rollout the stable version stays the one
--   before the first canary), or '' (none: it takes every start, and any rollout ends)
-- Replies:
--   {'OK', 1}            the current version changed
--   {'OK', 0}            the same version was current already
--   {'KEPT', version}    a newer publication is current (its version); nothing else changed
--   {'ROLLOUT_REFUSED', why}   a rollout that cannot be (nothing written): 'no-previous' (no version is current),
--                        'group:<g>' (the stable version runs in group g; a canary must too), 'not-startable'
--                        (either is not a transaction type), 'stable' (it is the stable version itself)
-- #include codes
-- #include rollout

local key, versionsKey, namesKey = KEYS[1], KEYS[2], KEYS[3]
local version, group, isType, definition, now, name = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local onFailure, published, priority, rate, cap, gate = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12] or ''
local share = ARGV[13] or ''

local current = redis.call('HMGET', key, 'version', 'publishedAt', 'stable', 'stableFields', 'stableOnFailure')
local stable, stash, stableOnFailure = current[3], current[4], current[5]
local newer = not current[1] or tonumber(current[2] or '0') < tonumber(published)
if share ~= '' and current[1] ~= version and newer then
  if not current[1] then
    return {CODE.ROLLOUT_REFUSED, 'no-previous'}
  end
  if not stable then -- the first canary: the current version becomes the stable one
    local f = redis.call('HMGET', key, 'version', 'nodeGroup', 'isTransactionType', 'definition', 'onFailure',
      'publishedAt', 'priority', 'rate', 'cap', 'gate')
    stable, stableOnFailure = f[1], f[5] or ''
    stash = cjson.encode({version = f[1], nodeGroup = f[2] or '', isTransactionType = f[3] or '0',
      definition = f[4] or '', onFailure = f[5] or '', publishedAt = f[6] or '0', priority = f[7] or '0',
      rate = f[8] or '', cap = f[9] or '', gate = f[10] or ''})
  end
  local was = cjson.decode(stash)
  if stable == version then
    return {CODE.ROLLOUT_REFUSED, 'stable'}
  elseif was.nodeGroup ~= group then
    return {CODE.ROLLOUT_REFUSED, 'group:' .. was.nodeGroup}
  elseif was.isTransactionType ~= '1' or isType ~= '1' then
    return {CODE.ROLLOUT_REFUSED, 'not-startable'}
  end
end
redis.call('SADD', namesKey, name)
redis.call('HSETNX', versionsKey, version, definition)
redis.call('HSETNX', versionsKey, 'at:' .. version, published)
if current[1] == version then
  return {CODE.OK, 0}
end
if not newer then
  return {CODE.KEPT, current[1]}
end
redis.call('HSET', key, 'version', version, 'nodeGroup', group, 'isTransactionType', isType,
  'definition', definition, 'updated', now, 'onFailure', onFailure, 'publishedAt', published, 'priority', priority,
  'rate', rate, 'cap', cap, 'gate', gate)
if share ~= '' then
  redis.call('HSET', key, 'stable', stable, 'share', share, 'stableOnFailure', stableOnFailure, 'stableFields', stash,
    'rollout', 'canary', 'canary', version, 'rolloutAt', now)
else
  redis.call('HDEL', key, unpack(ROLLOUT_FIELDS))
end
return {CODE.OK, 1}
