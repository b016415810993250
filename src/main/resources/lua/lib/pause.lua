-- pause (included by pause.lua and resume.lua): the walk over a transaction's tree (issue 34). A paused
-- transaction carries the field paused, JSON {since (ms), by, reason, root, tree}; where it stood is kept as it was:
-- queued ones stay on their queue until dequeue.lua pops them and parks them (pausedQueue: the queue it came
-- from, admin, out or in), sleepers stay in sleepingZ until wake.lua finds them due and parks them (pausedWake:
-- the time they fell due), and a running one is parked by checkpoint.lua at its next step boundary. A walk is
-- level by level, never recursive, and at most budget transactions a call: what it did not reach is answered,
-- for the caller to go on with (DESIGN: a walk over a structure a user can make large is bounded per call).

-- What a transaction waits for: its child pipeline, or every branch of its parallel step (lib/fork.lua).
local function pause_below(waitingFor, fork, into)
  if waitingFor == 'fork' and fork then
    local ok, f = pcall(cjson.decode, fork)
    if ok and type(f) == 'table' and type(f.ids) == 'table' then
      for _, b in ipairs(f.ids) do
        into[#into + 1] = b
      end
    end
  elseif waitingFor and waitingFor ~= '' then
    into[#into + 1] = waitingFor
  end
end

-- Walks txId and (tree) what it waits for, down the chain, calling visit(id, key, fields) on each live one (not
-- complete); fields are those asked for after processingState, waitingFor and fork (from 4 on). Answers how many
-- were looked at and the txIds left for another call.
local function pause_walk(txId, tree, budget, statePrefix, fields, visit)
  local walk, at, looked = {txId}, 1, 0
  while at <= #walk and looked < budget do
    local id = walk[at]
    at = at + 1
    looked = looked + 1
    local key = statePrefix .. id
    local t = redis.call('HMGET', key, 'processingState', 'waitingFor', 'fork', unpack(fields))
    if t[1] and t[1] ~= 'complete' then
      visit(id, key, t)
      if tree then
        pause_below(t[2], t[3], walk)
      end
    end
  end
  local left = {}
  for i = at, #walk do
    left[#left + 1] = walk[i]
  end
  return looked, left
end
