-- errors (included by retry.lua and complete.lua): a transaction's failed attempts, kept in its field errors (a
-- JSON array), bounded by limits.maxErrors. Past the bound the oldest entries fold into one summary entry at
-- the head: {"summary": true, "dropped": n, "from": first at, "to": last at, "codes": {code: count}}, so a
-- transaction retried or rerun for days keeps its newest errors and the count of the rest, not all of them.

-- The stored array (or nil) with the error (JSON text) appended, within max entries (the summary counts as one).
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
  local summary = (all[1] and all[1].summary) and table.remove(all, 1) or nil
  if not summary and #all <= max then
    return cjson.encode(all)
  end
  summary = summary or {summary = true, dropped = 0, codes = {}}
  while #all > max - 1 do
    local old = table.remove(all, 1)
    summary.dropped = summary.dropped + 1
    summary.from = summary.from or old.at
    summary.to = old.at
    local code = old.code or 'failed'
    summary.codes[code] = (summary.codes[code] or 0) + 1
  end
  table.insert(all, 1, summary)
  return cjson.encode(all)
end
