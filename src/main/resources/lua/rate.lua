-- rate: take one token from an owner's start bucket (a token bucket refilled continuously).
-- KEYS[1] rateH:<owner>
-- ARGV[1] now (ms)   ARGV[2] tokens per second   ARGV[3] bucket size (burst)
-- Replies:
--   {1, 0}        a token was taken: the start may go on
--   {0, waitMs}   the bucket is empty: try again in waitMs
-- The bucket expires once it would be full again, so idle owners cost nothing.
-- #include bucket

local bucketKey = KEYS[1]
local now, rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

local b = redis.call('HMGET', bucketKey, 'tokens', 'at')
local tokens = bucket_tokens(b[1], b[2], now, rate, burst)
local taken = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
else
  wait = bucket_wait(tokens, rate)
end
redis.call('HSET', bucketKey, 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', bucketKey, math.ceil((burst - tokens) * 1000 / rate) + 1000)
return {taken, wait}
