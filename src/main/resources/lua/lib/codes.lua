-- codes (included by every script that answers with a code): the one table of reply codes. Java names
-- the same codes in io.conveyor.redis.Code; a test keeps the two equal. Reading a code that is not here
-- raises an error, so a misspelt code fails loudly instead of answering nil.
local CODE = {}
for _, c in ipairs({'OK', 'NOT_FOUND', 'FENCED', 'CANCELLED', 'BAD_STATUS', 'DUPLICATE_TX', 'UNKNOWN_TYPE',
    'NOT_STARTABLE', 'GROUP_CHANGED', 'DUPLICATE_EXTERNAL_ID', 'UNKNOWN_PIPELINE', 'CANCEL_REQUESTED',
    'ALREADY_FINAL', 'SET', 'SLEEPING', 'REQUEUED', 'TOO_LATE', 'NOT_PENDING', 'LATE', 'NOT_RERUNNABLE',
    'NO_STEP_INPUT', 'KEPT', 'DISABLED', 'LIVE_LIMIT', 'DEPTH_EXCEEDED', 'DESCENDANTS_EXCEEDED',
    'DELIVERED', 'WAITING', 'TIMED_OUT', 'START', 'DUPLICATE', 'DEBOUNCED', 'THROTTLED', 'GATE_BUSY',
    'PAUSED', 'NOT_PAUSED', 'MIGRATED',
    'ROLLOUT_REFUSED', 'NO_ROLLOUT'}) do
  CODE[c] = c
end
setmetatable(CODE, {__index = function(_, name) error('unknown reply code ' .. tostring(name)) end})
