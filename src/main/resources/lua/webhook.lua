-- webhook: record the results of the caller's deliveries, then, if the caller leads the webhook role,
-- hand out due deliveries, each rescheduled before it leaves Redis so a crash means a retry, not a loss.
-- KEYS[1] webhooksZ   KEYS[2] webhookLock1   KEYS[3] webhookLock2   KEYS[4] eventsL
-- KEYS[4 + i] webhookH:<webhookId> of result i
-- ARGV[1] nodeId   ARGV[2] now (ms)   ARGV[3] most deliveries to hand out   ARGV[4] lease (ms)   ARGV[5] grace (ms)
-- ARGV[6] the webhookH key prefix: the due deliveries are known only once webhooksZ is read
-- ARGV[7] how far a handed-out delivery moves in webhooksZ (ms): due again then if no result came
-- ARGV[8] failures of one URL that pause it   ARGV[9] the window they count in (ms)   ARGV[10] the pause (ms)
-- ARGV[11] the stateH key prefix: a delivery's transaction is known only from the delivery
-- ARGV[12], ARGV[13] the webhookCounter and webhookPause key prefixes: a delivery's URL hash is known only
--   from the delivery (all prefixes come from Keys, e.g. Keys.webhookH(""))
-- ARGV[14 + 6(i-1) ..] result i: webhookId, outcome (delivered | retry | exhausted | gone | synced |
--   unsynced: the archive had no row for the outcome, which then goes to eventsL), the
--   attempt it is for (attempts so far + 1), HTTP status or '', error or '', next attempt (ms, for retry) or ''
-- Replies: {leader (1 or 0), then per handed-out delivery: {kind, webhookId, {event field, value, …},
--   {summary fields of its transaction, or empty when the transaction is archived}}}
--   kind 'deliver': POST it.   kind 'sync': delivery has ended for an archived transaction; write its
--   final state (event field 'state') to the archive, then answer 'synced'.
-- A result for another attempt than the next one is stale (a former leader's) and ignored. When delivery
-- ends, the state {url, status, attempts, lastCode, lastError, lastAttempt, deliveredAt} goes into the
-- transaction's stateH field webhook (raising rev, so the archive writes it again), and the event is
-- deleted; if the transaction is archived already, the event stays as a sync job. A URL that fails
-- ARGV[8] times within ARGV[9] is paused for ARGV[10]: its deliveries move past the pause.
-- Events (eventsL): webhook-url-paused, webhook-exhausted, webhook-outcome-unrecorded.
-- #include lease
-- #include events
-- #include summary

local webhooksKey, lock1, lock2, eventsKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local nodeId, now, max, lease, grace, webhookPrefix = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5],
  ARGV[6]
local holdFor, pauseAfter, window, pauseFor = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9], tonumber(ARGV[10])
local statePrefix, counterPrefix, pausePrefix = ARGV[11], ARGV[12], ARGV[13]
local resultCount = #KEYS - 4
-- result r: its webhookH key, then webhookId, outcome, attempt, HTTP status, error, next attempt
local function result_of(r)
  local i = 14 + 6 * (r - 1)
  return KEYS[4 + r], ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
end

-- the delivering node acted; the subject is the transaction, or the URL a pause is about
local function event(kind, details)
  event_log(eventsKey, kind, now, nodeId, details.txId or details.url, details)
end

local function finish(id, key)
  local w = redis.call('HMGET', key, 'txId', 'event', 'url', 'status', 'attempts', 'lastCode', 'lastError',
    'lastAttempt', 'deliveredAt')
  local state = {url = w[3], status = w[4], attempts = tonumber(w[5])}
  if w[6] and w[6] ~= '' then state.lastCode = tonumber(w[6]) end
  if w[7] and w[7] ~= '' then state.lastError = w[7] end
  if w[8] and w[8] ~= '' then state.lastAttempt = tonumber(w[8]) end
  if w[9] and w[9] ~= '' then state.deliveredAt = tonumber(w[9]) end
  local json = cjson.encode(state)
  local stateKey = statePrefix .. w[1]
  if w[2] ~= 'complete' then
    redis.call('DEL', key)
    redis.call('ZREM', webhooksKey, id)
  elseif redis.call('EXISTS', stateKey) == 1 then
    redis.call('HSET', stateKey, 'webhook', json)
    redis.call('HINCRBY', stateKey, 'rev', 1)
    redis.call('DEL', key)
    redis.call('ZREM', webhooksKey, id)
  else
    redis.call('HSET', key, 'sync', '1', 'state', json)
    redis.call('ZADD', webhooksKey, now, id)
  end
end

local function failed(w)
  local counter = counterPrefix .. w[4]
  local n = redis.call('INCR', counter)
  if n == 1 then
    redis.call('PEXPIRE', counter, window)
  end
  if n >= pauseAfter then
    redis.call('DEL', counter)
    -- results of attempts made before the pause began (several in one batch, or from a leader that lost
    -- its lease) must not pause it again nor log it again
    if redis.call('SET', pausePrefix .. w[4], now + pauseFor, 'PX', pauseFor, 'NX') then
      event('webhook-url-paused', {url = w[5], failures = n, pausedUntil = now + pauseFor})
    end
  end
end

for r = 1, resultCount do
  local key, id, outcome, attempt, code, err, nextAttempt = result_of(r)
  local w = redis.call('HMGET', key, 'status', 'attempts', 'txId', 'urlHash', 'url', 'sync')
  if outcome == 'synced' or outcome == 'unsynced' then
    if w[6] == '1' then
      if outcome == 'unsynced' then
        -- the archive has no row to hold the outcome: keep it where an operator finds it
        event('webhook-outcome-unrecorded', {txId = w[3], webhookId = id,
          state = redis.call('HGET', key, 'state')})
      end
      redis.call('DEL', key)
      redis.call('ZREM', webhooksKey, id)
    end
  elseif w[1] == 'pending' and w[6] ~= '1' and tonumber(w[2]) + 1 == attempt then
    redis.call('HSET', key, 'attempts', attempt, 'lastAttempt', now, 'lastCode', code, 'lastError', err)
    redis.call('HDEL', key, 'handedAt')
    if outcome == 'retry' or outcome == 'exhausted' then
      failed(w)
    end
    if outcome == 'retry' then
      redis.call('HSET', key, 'nextAttempt', nextAttempt)
      redis.call('ZADD', webhooksKey, nextAttempt, id)
    else
      redis.call('HSET', key, 'status', outcome)
      redis.call('HDEL', key, 'nextAttempt')
      if outcome == 'delivered' then
        redis.call('HSET', key, 'deliveredAt', now)
      elseif outcome == 'exhausted' then
        event('webhook-exhausted', {txId = w[3], webhookId = id, url = w[5], attempts = attempt,
          lastError = err})
      end
      finish(id, key)
    end
  end
end

-- a call that only confirms or records (ARGV[3] = 0) renews a lease it holds but never takes a free one:
-- a node that is stopping must not end up leading
if not lease_hold(lock1, lock2, nodeId, lease, grace, max > 0) then
  return {0}
end

local reply = {1}
if max > 0 then
  local lost = now + holdFor
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', webhooksKey, '-inf', now, 'LIMIT', 0, max)) do
    local key = webhookPrefix .. id
    local w = redis.call('HMGET', key, 'status', 'urlHash', 'sync', 'txId')
    if not w[1] then
      redis.call('ZREM', webhooksKey, id)
    elseif w[3] == '1' then
      redis.call('ZADD', webhooksKey, lost, id)
      reply[#reply + 1] = {'sync', id, redis.call('HGETALL', key), {}}
    elseif w[1] ~= 'pending' then
      redis.call('ZREM', webhooksKey, id)
      redis.call('DEL', key)
    else
      local paused = redis.call('GET', pausePrefix .. w[2])
      if paused then
        redis.call('ZADD', webhooksKey, paused, id)
        redis.call('HSET', key, 'nextAttempt', paused)
      else
        redis.call('ZADD', webhooksKey, lost, id)
        redis.call('HSET', key, 'handedAt', now)
        local stateKey = statePrefix .. w[4]
        local summary = {}
        if redis.call('EXISTS', stateKey) == 1 then
          summary = redis.call('HMGET', stateKey, unpack(WEBHOOK_STATE_FIELDS))
        end
        reply[#reply + 1] = {'deliver', id, redis.call('HGETALL', key), summary}
      end
    end
  end
end
return reply
