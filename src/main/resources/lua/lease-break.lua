-- lease-break: free a role's lease held by a node known to be gone (Hazelcast saw it leave), so another
-- node can lead at once instead of after lease + grace. Only for roles whose work is safe to run twice
-- at once (the reaper's is: reap.lua is atomic and fenced).
-- KEYS[1] <role>Lock1   KEYS[2] <role>Lock2
-- ARGV[1..] nodeIds that are gone
-- Replies: 1 if the lease was freed, else 0 (held by another node, or by nobody)

for i = 1, #ARGV do
  if redis.call('GET', KEYS[1]) == ARGV[i] or redis.call('GET', KEYS[2]) == ARGV[i] then
    redis.call('DEL', KEYS[1], KEYS[2])
    return 1
  end
end
return 0
