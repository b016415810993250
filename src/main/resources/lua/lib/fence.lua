-- fence (included by every script a running node writes through: checkpoint, complete, progress, retry, sleep,
-- and hop and fork through lib/child.lua): the node's write is its own only while the transaction is processing
-- at the attempt the node was given; a raised attempt (another node took it over) or another state fences it.
local function fence_holds(attempt, processingState, given)
  return attempt == given and processingState == 'processing'
end

