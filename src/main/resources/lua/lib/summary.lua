-- summary (included by get-state.lua and webhook.lua): the stateH fields that make a transaction's summary, in
-- the order Java reads them (io.conveyor.redis.Summaries.STATE_FIELDS; LuaFilesTest keeps the two equal).
local STATE_FIELDS = {'owner', 'externalId', 'type', 'version', 'status', 'processingState', 'attempt', 'created',
  'updated', 'completed', 'output', 'note', 'progress', 'metadata', 'step', 'webhookUrl', 'webhook', 'retry',
  'errors', 'runs', 'compensation', 'startAt', 'gate', 'paused'}
-- A webhook's summary: the fields up to webhookUrl (its body never carried the delivery's own state, retries,
-- errors, runs, compensation or startAt).
local WEBHOOK_STATE_FIELDS = {unpack(STATE_FIELDS, 1, 16)}

