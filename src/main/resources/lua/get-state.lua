-- get-state: read the fields of a transaction that make its summary.
-- KEYS[1] stateH:<txId>
-- ARGV: none
-- Replies: {} when there is no such transaction, else
--   {owner, externalId, type, version, status, processingState, attempt, created, updated, completed,
--    output, note, progress, metadata, step}
-- (nil entries come back as false; the caller maps them to absent fields)

if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
return redis.call('HMGET', KEYS[1], 'owner', 'externalId', 'type', 'version', 'status', 'processingState',
  'attempt', 'created', 'updated', 'completed', 'output', 'note', 'progress', 'metadata', 'step')
