-- errors (included by retry.lua, complete.lua and rerun.lua): what a transaction keeps of its past, bounded by
-- limits.maxErrors: the failed attempts (field errors) and the runs a rerun ended (field runs), both JSON
-- arrays. Past the bound the oldest entries fold into one summary entry at the head:
-- {"summary": true, "dropped": n, "from": first time, "to": last time, "codes" (errors) or "statuses" (runs):
-- {value: count}}, so a transaction retried or rerun for days keeps its newest entries and the count of the rest.

-- The decoded array all (with its summary, if any, at the head) within max entries, as JSON text; by names the
-- field counted per value ('code' or 'status'), at the entry's time ('at' or 'completed').
local function history_fold(all, max, by, at)
  local summary = (all[1] and all[1].summary) and table.remove(all, 1) or nil
  if not summary and #all <= max then
    return cjson.encode(all)
  end
  summary = summary or {summary = true, dropped = 0}
  local counts = by == 'code' and 'codes' or 'statuses'
  summary[counts] = summary[counts] or {}
  while #all > max - 1 do
    local old = table.remove(all, 1)
    summary.dropped = summary.dropped + 1
    summary.from = summary.from or old[at]
    summary.to = old[at] or summary.to
    local value = old[by] or 'unknown'
    summary[counts][value] = (summary[counts][value] or 0) + 1
  end
  table.insert(all, 1, summary)
  return cjson.encode(all)
end

-- The stored errors (or nil) with the error (JSON text) appended, within max entries (the summary counts as one).
local function errors_append(stored, err, max)
  if not stored then
    return '[' .. err .. ']'
  end
  -- every attempt's entry has a code; only when the array may be full is it decoded (a few dozen entries)
  local n = select(2, string.gsub(stored, '"code":', ''))
  if n + 2 <= max then
    return string.sub(stored, 1, -2) .. ',' .. err .. ']'
  end
  local all = cjson.decode(stored)
  all[#all + 1] = cjson.decode(err)
  return history_fold(all, max, 'code', 'at')
end

-- The stored runs (or nil) with the run that ended (JSON text) appended, within max entries (reruns are rare:
-- decoded each time).
local function runs_append(stored, run, max)
  if not stored then
    return '[' .. run .. ']'
  end
  local all = cjson.decode(stored)
  if #all + 1 <= max then
    return string.sub(stored, 1, -2) .. ',' .. run .. ']' -- as text: a re-encoded [] would come back as {}
  end
  all[#all + 1] = cjson.decode(run)
  return history_fold(all, max, 'status', 'completed')
end
