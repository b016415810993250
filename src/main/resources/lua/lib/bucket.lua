-- bucket (included by rate.lua and dequeue.lua): a token bucket refilled continuously, perSec tokens a second up
-- to burst. Answers the tokens it holds at now, from those stored at a time (both nil for a new bucket: full).
local function bucket_tokens(stored, at, now, perSec, burst)
  local tokens = tonumber(stored) or burst
  return math.min(burst, tokens + math.max(0, now - (tonumber(at) or now)) * perSec / 1000)
end

-- The ms until a bucket holding tokens (fewer than 1) has one.
local function bucket_wait(tokens, perSec)
  return math.ceil((1 - tokens) * 1000 / perSec)
end

