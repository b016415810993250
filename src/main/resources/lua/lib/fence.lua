-- fence (included by every script a running node writes through: checkpoint, complete, progress, retry, sleep,
-- and hop and fork through lib/child.lua): the node's write is its own only while the transaction is processing
-- at the attempt the node was given; a raised attempt (another node took it over) or another state fences it.
-- Include it after codes.
local function fence_holds(attempt, processingState, given)
  return attempt == given and processingState == 'processing'
end

-- Why a node's write may not go on, as the script answers it, or nil when it may: {'FENCED', attempt,
-- processingState} (not the node's any more; nothing written), or {'CANCELLED'} (its owner asked to cancel it:
-- nothing written, the node completes it cancelled instead).
local function fence_refusal(attempt, processingState, cancelRequested, given)
  if not fence_holds(attempt, processingState, given) then
    return {CODE.FENCED, attempt or '', processingState or ''}
  end
  if cancelRequested == '1' then
    return {CODE.CANCELLED}
  end
  return nil
end
