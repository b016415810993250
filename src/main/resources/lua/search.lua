-- search: walk a partition's transactions newest first (liveZ, or a phase index, scored by created) and answer
-- those that match, for the transaction search (GET /api/v1/transactions, GET /api/v1/admin/transactions). Reads
-- only, except that an entry whose transaction Redis no longer holds leaves the index, and so does an entry of a
-- phase index whose transaction has left the index's phases (the script that puts it back adds it again).
-- KEYS[1] liveZ, or a phaseZ:<name> (ended: what ended other than success; retrying; waiting; paused)
-- KEYS[2] stuckH (the partition's stuck list, stuck.lua): asked for the phase stuck, a transaction listed there
--   matches as stuck whatever it otherwise is
-- ARGV[1] the stateH key prefix (Keys.stateH("")): the walked txIds, known only once liveZ is read, name their
--   stateH keys
-- ARGV[2] the highest created (ms) to look at: '+inf', a number (inclusive), or '(' and a number (exclusive)
-- ARGV[3] a txId or '': with it, entries created exactly at ARGV[2] whose txId is not below it are skipped (the
--   page before ended there: order is created, then txId, both descending)
-- ARGV[4] the lowest created (ms) to look at, inclusive, or '-inf'
-- ARGV[5] how many matches to answer at most   ARGV[6] how many entries to look at at most
-- ARGV[7] owner or '' (any)   ARGV[8] pipeline or ''   ARGV[9] phases, comma-separated between commas
--   (",queued,failed,") or '' (any): a transaction's phase is its status once final, else where it stands:
--   paused (pause.lua), else queued, running, sleeping, waiting (for a child, branches or a switch), retrying,
--   scheduled; and stuck
--   (listed in KEYS[2])
-- ARGV[10] externalId or ''   ARGV[11] text that its metadata JSON must hold, lower case, or '': of a sealed
--   metadata (encryption at rest: {"$sealed": …, "tx": …, "clear": {…}}) only what comes from "clear": on counts,
--   never the base64 of the sealed text
-- ARGV[12] the phases KEYS[1] holds, as ARGV[9] (",failed,cancelled,"), or '' (liveZ: every transaction)
-- Replies: {matches, next}: matches a flat list txId, created, phase, …; next '' when the walk reached the
--   lowest created, else "<created> <txId>" of the last entry looked at (everything down to it was looked at)

local indexKey, stuckKey = KEYS[1], KEYS[2]
local statePrefix, max, skipFrom, min = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local want, budget = tonumber(ARGV[5]), tonumber(ARGV[6])
local owner, pipeline, phases, ext, text, held = ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12] or ''

-- what a text search may match of a metadata: all of it, or of a sealed one only its clear fields (see ARGV[11])
local function searchable(m)
  if string.sub(m, 1, 10) ~= '{"$sealed"' then
    return m
  end
  local at = string.find(m, '"clear":', 1, true)
  return at and string.sub(m, at) or ''
end

local finals = {success = 1, failed = 1, aborted = 1, cancelled = 1, timeout = 1, ['internal-error'] = 1}
local stuckAsked = string.find(phases, ',stuck,', 1, true) ~= nil

-- a field given and not empty (retry.lua and a plain sleep write waitingSwitch '')
local function given(v)
  return v and v ~= ''
end

-- Where a transaction stands (stuck, listed in KEYS[2], is decided where it is matched). A new phase is one more
-- branch here, a name in Search.PHASES and,
-- if it is to be found without a scan, a phaseZ the scripts that enter it add to (Search.INDEXES).
local function phase_of(s)
  if finals[s[3]] then
    return s[3]
  end
  if given(s[10]) then
    return 'paused'
  end
  local p = s[4]
  if p == 'processing' then
    return 'running'
  elseif p == 'sleeping' then
    if given(s[7]) or given(s[8]) then
      return 'waiting'
    elseif given(s[9]) then
      return 'retrying'
    end
    return 'sleeping'
  elseif p == 'pending' then
    return 'queued'
  end
  return p or 'queued'
end

local matches = {}
local maxScore = tonumber((string.gsub(max, '^%(', '')))
local looked = 0
local chunk = 1000
local lastScore, lastId
local done = false
while not done and #matches < want * 3 and looked < budget do
  local rows = redis.call('ZRANGE', indexKey, max, min, 'BYSCORE', 'REV', 'LIMIT', 0, chunk, 'WITHSCORES')
  if #rows == 0 then
    done = true
    break
  end
  local progressed = false
  for j = 1, #rows, 2 do
    local id, score = rows[j], tonumber(rows[j + 1])
    if not (skipFrom ~= '' and score == maxScore and id >= skipFrom) then
      progressed = true
      looked = looked + 1
      lastScore, lastId = score, id
      local s = redis.call('HMGET', statePrefix .. id, 'owner', 'type', 'status', 'processingState', 'externalId',
        'metadata', 'waitingFor', 'waitingSwitch', 'retry', 'paused')
      if not s[1] then
        redis.call('ZREM', indexKey, id)
      elseif held ~= '' and not string.find(held, ',' .. phase_of(s) .. ',', 1, true) then
        redis.call('ZREM', indexKey, id)
      elseif (owner == '' or s[1] == owner) and (pipeline == '' or s[2] == pipeline)
          and (ext == '' or s[5] == ext)
          and (text == '' or (s[6] and string.find(string.lower(searchable(s[6])), text, 1, true))) then
        local ph = phase_of(s)
        if phases ~= '' and not string.find(phases, ',' .. ph .. ',', 1, true) and stuckAsked
            and redis.call('HEXISTS', stuckKey, id) == 1 then
          ph = 'stuck'
        end
        if phases == '' or string.find(phases, ',' .. ph .. ',', 1, true) then
          matches[#matches + 1] = id
          matches[#matches + 1] = rows[j + 1]
          matches[#matches + 1] = ph
        end
      end
      if #matches >= want * 3 or looked >= budget then
        break
      end
    end
  end
  if #matches >= want * 3 or looked >= budget then
    break
  end
  if not progressed then
    if #rows < chunk * 2 then
      done = true -- nothing left beyond the entries skipped
    else
      chunk = chunk * 2 -- a run of entries created in one millisecond longer than a chunk
    end
  elseif #rows < chunk * 2 then
    done = true
  else
    max, skipFrom, maxScore = tostring(lastScore), lastId, lastScore
  end
end
if done or not lastScore then
  return {matches, ''}
end
return {matches, string.format('%d', lastScore) .. ' ' .. lastId}
