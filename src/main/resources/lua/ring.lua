-- ring: wake an idle node of a group in a partition (a node whose dequeue held work back by a rate limit rings
-- when the limit's next token is due): a token on the ring list, and a publish on its channel either way.
-- KEYS[1] qRingL:<group>   ARGV: none
-- Replies: 1
-- #include publish
-- #include queue

local ringKey = KEYS[1]

queue_ring(ringKey, true)
return 1
