-- cancel-walk: carry a partition's cancel walk on (lib/fork.lua): the descendants of cancelled transactions,
-- and the branches of joins decided without them, that earlier calls left on cancelL because one call ends
-- at most 20. Called by a cancel's own loop (down to the floor its cancel.lua answered) and by the reaper
-- leader of the partition every round (floor 0), so no walk depends on its caller staying alive.
-- KEYS[1] cancelL   KEYS[2] toArchiveZ   KEYS[3] notify (channel)   KEYS[4] sleepingZ
-- KEYS[5..7] stats1H, stats2H, stats3H of the slots that hold now   KEYS[8] liveZ (a compensation is added)
-- KEYS[9] liveOwnersH (each transaction ended here stops counting as live; a compensation starts to: lib/live.lua)
-- KEYS[10] phaseZ:ended (a search index: each transaction cancelled here is added, by created)
-- ARGV[1] now (ms)   ARGV[2] archive delay (ms)   ARGV[3] floor: entries of cancelL below it are left alone
-- ARGV[4..9] the partition's stateH, qOutL, qRingL, pipelineH, qInZ and webhookH key prefixes: the
--   transactions are known only from cancelL, and a compensation's pipeline and group only from the states
-- Replies: {pending}: how many entries above floor are still to go (0: the walk is done down to floor)
-- #include publish
-- #include codes
-- #include queue
-- #include webhooks
-- #include stats
-- #include live
-- #include compensate
-- #include gate
-- #include fork

local walkKey, archiveKey, notifyKey, sleepingKey, stats1, stats2, stats3 = KEYS[1], KEYS[2], KEYS[3], KEYS[4],
  KEYS[5], KEYS[6], KEYS[7]
local liveKey, liveOwnersKey = KEYS[8], KEYS[9]
local now, archiveDelay, floor = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local statePrefix, outPrefix, ringPrefix, pipelinePrefix, inPrefix, webhookPrefix = ARGV[4], ARGV[5], ARGV[6], ARGV[7],
  ARGV[8], ARGV[9]

local env = {now = now, archiveAt = tonumber(now) + archiveDelay, counts = {}, archiveKey = archiveKey,
  notifyKey = notifyKey, sleepingKey = sleepingKey, walkKey = walkKey, prefixes = {state = statePrefix,
  out = outPrefix, ring = ringPrefix, pipeline = pipelinePrefix, queue = inPrefix, webhook = webhookPrefix,
  live = liveKey, liveOwners = live_batch(liveOwnersKey), ended = KEYS[10]}}
local pending = fork_walk(env, WALK_BUDGET, floor)
stats_write({stats1, stats2, stats3}, now, env.counts)
live_flush(env.prefixes.liveOwners)
return {pending}
