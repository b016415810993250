-- rollout (included by start.lua and put-pipeline.lua): a canary version takes share % of new starts, the stable
-- version (the one current before the canary's upload) the rest. pipelineH holds the canary as its version and,
-- during a rollout, stable (the stable version), share (1-99), stableOnFailure, stableFields (JSON of the stable's
-- pipelineH fields, which rollout.lua puts back on a rollback), rollout (canary, promoted or rolledback),
-- canary (the version rolled out) and rolloutAt (ms).

-- Which version a start of txId runs on: decided by a hash of the txId, so the same txId always lands on the same
-- version (a test or an operator can tell which) and the share holds however the starts are batched or spread over
-- nodes; the SHA-1's first 32 bits are uniform for any txId, random or derived.
local function rollout_pick(txId, version, onFailure, stable, share, stableOnFailure)
  if not stable or stable == '' then
    return version, onFailure
  end
  local bucket = tonumber(string.sub(redis.sha1hex(txId), 1, 8), 16) % 100
  if bucket < (tonumber(share) or 0) then
    return version, onFailure
  end
  return stable, stableOnFailure
end

-- The fields a rollout adds to pipelineH (a publication without a rollout deletes them: put-pipeline.lua)
local ROLLOUT_FIELDS = {'stable', 'share', 'stableOnFailure', 'stableFields', 'rollout', 'canary', 'rolloutAt'}
