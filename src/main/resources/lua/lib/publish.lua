-- publish (included by every script that publishes, before queue and webhooks): a message on a channel.
-- A partition's channel (its name carries the partition's hash tag {p<N>-<k>}) is a shard channel:
-- SPUBLISH delivers it on the master of its slot only, where the nodes SSUBSCRIBE; a plain PUBLISH on a
-- Redis Cluster travels to every node over the cluster bus, now and then 40 ms late. With one partition
-- the channel is a plain one (any Redis has PUBLISH; an embedded Redis 6.2 has no SPUBLISH).
local function publish(channel, message)
  if string.find(channel, '{p%d+%-%d+}') then
    redis.call('SPUBLISH', channel, message)
  else
    redis.call('PUBLISH', channel, message)
  end
end
