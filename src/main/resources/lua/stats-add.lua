-- stats-add: counts a node added up from the replies of its start and complete calls (their last element, see
-- lib/stats.lua stats_flat), written into one 5 s slot of the stats (docs/decisions.md, "Stats counted by the node").
-- KEYS[1] stats1H:<slot> of the slot the counts belong to (the time the calls were made)
-- ARGV[1] a time in that slot (ms): the key expires when its series says
-- ARGV[2i], ARGV[2i + 1] field i (1..n) and its count
-- Replies: the number of fields written
-- #include stats

local slotKey, at = KEYS[1], ARGV[1]
local fieldCount = (#ARGV - 1) / 2
-- field i and its count
local function field(i) return ARGV[2 * i], tonumber(ARGV[2 * i + 1]) end

local counts = {}
for i = 1, fieldCount do
  local f, n = field(i)
  counts[f] = n
end
stats_write({slotKey}, at, counts)
return fieldCount
