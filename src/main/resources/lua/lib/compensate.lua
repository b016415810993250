-- compensate (included by complete.lua and cancel.lua, after queue, webhooks and stats): a transaction whose
-- pipeline names an onFailure pipeline (its stateH field onFailure, copied at start) and that ended failed,
-- timeout, internal-error or cancelled starts that pipeline as a compensation child: in its partition, on
-- its group's qInZ, with what went wrong as input. The transaction's archiving and completion webhook wait
-- until the compensation ends, so both carry its outcome (field compensation: {txId, pipeline, status}).
-- A compensation is never compensated itself.
local COMPENSATED = {failed = 1, timeout = 1, ['internal-error'] = 1, cancelled = 1}

-- True when a compensation started (the caller then neither archives nor webhooks the transaction now).
local function compensate_start(key, id, status, note, now, prefixes, counts)
  if not COMPENSATED[status] then
    return false
  end
  local s = redis.call('HMGET', key, 'onFailure', 'owner', 'metadata', 'input', 'data', 'errors', 'type',
    'compensationFor', 'step', 'attempt', 'priority', 'qBoost')
  if not s[1] or s[1] == '' or s[8] then
    return false
  end
  -- its txId: in the transaction's partition (the same first digits), the rest from a hash of the transaction,
  -- its attempt and the time, so each run that ends badly has a compensation of its own
  local childId = string.sub(id, 1, 7) .. string.sub(redis.sha1hex(id .. ':' .. (s[10] or '0') .. ':' .. now), 1, 28)
  local p = redis.call('HMGET', prefixes.pipeline .. s[1], 'version', 'nodeGroup')
  if not p[1] then
    redis.call('HSET', key, 'compensation', cjson.encode({pipeline = s[1], status = 'not-started',
      note = 'no pipeline named ' .. s[1]}))
    return false
  end
  -- built as text: input, stepInput and errors are JSON already, and must not pass through Lua numbers
  local input = '{"txId":' .. cjson.encode(id) .. ',"type":' .. cjson.encode(s[7]) .. ',"status":'
    .. cjson.encode(status) .. ',"note":' .. cjson.encode(note or '') .. ',"step":' .. (tonumber(s[9] or '0') + 1)
    .. ',"input":' .. (s[4] or 'null') .. ',"stepInput":' .. (s[5] or 'null') .. ',"errors":' .. (s[6] or '[]')
    .. '}'
  redis.call('HSET', prefixes.state .. childId, 'owner', s[2], 'externalId', '', 'type', s[1], 'version', p[1],
    'group', p[2], 'status', 'running', 'processingState', 'queued', 'attempt', 0, 'step', 0, 'created', now,
    'updated', now, 'metadata', s[3] or '{}', 'input', input, 'compensationFor', id, 'priority', s[11] or '0',
    'qBoost', s[12] or '0')
  queue_push_in(prefixes.queue .. p[2], prefixes.ring .. p[2], childId, now, s[12])
  redis.call('ZADD', prefixes.live, now, childId)
  live_began(prefixes.liveOwners, s[2])
  stats_tally(counts, 'queued', p[2], s[1], s[2])
  redis.call('HSET', key, 'compensation', cjson.encode({txId = childId, pipeline = s[1], status = 'running'}))
  return true
end

-- A compensation child ended: its transaction records the outcome, and is now scheduled for archiving and
-- its completion webhook (what compensate_start held back).
local function compensate_ended(parentId, childId, status, note, now, archiveAt, prefixes, archiveKey,
                                webhooksKey, notifyKey)
  local pkey = prefixes.state .. parentId
  local c = redis.call('HGET', pkey, 'compensation')
  if not c then
    return
  end
  local comp = cjson.decode(c)
  if comp.txId ~= childId or comp.status ~= 'running' then
    return
  end
  comp.status = status
  if note and note ~= '' then
    comp.note = note
  end
  redis.call('HSET', pkey, 'compensation', cjson.encode(comp), 'updated', now)
  redis.call('ZADD', archiveKey, archiveAt, parentId)
  webhooks_schedule(pkey, prefixes.webhook .. parentId, webhooksKey, notifyKey, parentId, now)
end
