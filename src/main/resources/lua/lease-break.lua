-- lease-break: a leader gives its role up (it stops, or the archive leader stands down after failed
-- writes), so another node can lead at once instead of after lease + grace. The caller has stopped acting
-- as leader before it calls this.
-- KEYS[1] <role>Lock1   KEYS[2] <role>Lock2
-- ARGV[1..] nodeIds that are gone
-- Replies: 1 if the lease was freed, else 0 (held by another node, or by nobody)

local lock1, lock2 = KEYS[1], KEYS[2]
local goneCount = #ARGV
local function gone(i) return ARGV[i] end

for i = 1, goneCount do
  if redis.call('GET', lock1) == gone(i) or redis.call('GET', lock2) == gone(i) then
    redis.call('DEL', lock1, lock2)
    return 1
  end
end
return 0
