// Search over live and archived transactions: the form's filters live in the address (#search?status=…), so a
// search is a link to keep; results can be selected and retried or cancelled together.
import { $, text, txLink, cell } from './dom.js';
import { api } from './api.js';

const FILTERS = ['status', 'pipeline', 'owner', 'externalId', 'from', 'to', 'q'];
let nextCursor = null;
let searching = 0; // each search or page of more takes the next number; only the latest one's answer is drawn
let reading = 0; // reads out now: a click on More while one is out is dropped, so a page is never asked for twice

function searchParams() {
  const p = new URLSearchParams();
  FILTERS.forEach(f => { const v = $('#s-' + f).value.trim(); if (v) { p.set(f, v); } });
  return p;
}

function selectedIds() {
  return [...document.querySelectorAll('#results input.pick:checked')].map(c => c.dataset.tx);
}

function updateBulk() {
  const n = selectedIds().length;
  $('#btn-bulk-retry').disabled = n === 0;
  $('#btn-bulk-cancel').disabled = n === 0;
}

function renderResults(data, append) {
  const body = $('#results tbody');
  if (!append) { body.replaceChildren(); }
  data.transactions.forEach(t => {
    const tr = document.createElement('tr');
    tr.className = 'result-row';
    tr.dataset.tx = t.txId;
    tr.dataset.phase = t.phase;
    const pick = document.createElement('td');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.className = 'pick';
    box.dataset.tx = t.txId;
    box.setAttribute('aria-label', 'select ' + t.txId);
    box.addEventListener('change', updateBulk);
    pick.appendChild(box);
    tr.appendChild(pick);
    const td = document.createElement('td');
    td.appendChild(txLink(t.txId));
    tr.appendChild(td);
    cell(tr, t.type); cell(tr, t.phase).className = 'phase status-' + t.phase;
    cell(tr, t.owner); cell(tr, t.externalId); cell(tr, t.created);
    body.appendChild(tr);
  });
  nextCursor = data.next;
  $('#btn-more').hidden = !nextCursor;
  updateBulk();
}

export async function runSearch(append) {
  if (append && (reading > 0 || !nextCursor)) { return; }
  const mine = ++searching;
  const p = searchParams();
  if (!append) {
    history.replaceState(null, '', '#search?' + p.toString());
    // the cursor shown belongs to the search before: none until this one answers (or for good, if it is refused)
    nextCursor = null;
    $('#btn-more').hidden = true;
  }
  if (append) { p.set('cursor', nextCursor); }
  p.set('limit', '50');
  $('#results').dataset.reading = String(++reading);
  try {
    const data = await api('GET', '/api/v1/admin/transactions?' + p.toString());
    if (mine !== searching) { return; } // a later search was asked for: this answer is not what the form says
    renderResults(data, append);
    text($('#search-result'), $('#results tbody').children.length + ' shown' + (nextCursor ? ', more below' : ''));
  } catch (e) {
    if (mine === searching && e.message !== 'unauthorized') { text($('#search-result'), 'search refused: ' + e.message); }
  } finally {
    $('#results').dataset.reading = String(--reading);
  }
}

/** A pushed completion: the row of that transaction, if shown, takes its final status at once. */
export function completed(txId, status) {
  const row = document.querySelector('#results tr.result-row[data-tx="' + txId + '"]');
  if (row) {
    row.dataset.phase = status;
    const phase = row.querySelector('td.phase');
    text(phase, status);
    phase.className = 'phase status-' + status;
  }
}

/** Retries or cancels each selected transaction; says how many were done and why others were refused. */
async function bulk(action, ask) {
  const ids = selectedIds();
  if (!(await ask(action === 'retry'
    ? 'Run the ' + ids.length + ' selected transaction(s) again, each from the step that failed. Those still running or that succeeded are refused and stay as they are.'
    : 'Cancel the ' + ids.length + ' selected transaction(s): queued and waiting ones end cancelled at once (with their children), running ones at their next step. Ended ones are refused.'))) {
    return;
  }
  const refused = [];
  let done = 0;
  for (const id of ids) {
    try {
      await api('POST', '/api/v1/admin/transactions/' + id + '/' + action);
      done++;
    } catch (e) {
      refused.push(id.slice(0, 12) + '…: ' + e.message);
    }
  }
  await runSearch(false);
  text($('#search-result'), action + ': ' + done + ' of ' + ids.length + ' done' +
    (refused.length ? '; refused: ' + refused.join('; ') : ''));
}

/** Fills the form from the address; true when it held a search. */
export function searchFromAddress() {
  if (!location.hash.startsWith('#search?')) { return false; }
  const p = new URLSearchParams(location.hash.slice('#search?'.length));
  FILTERS.forEach(f => { $('#s-' + f).value = p.get(f) || ''; });
  return true;
}

export function wireSearch(ask) {
  $('#search-form').addEventListener('submit', (e) => { e.preventDefault(); runSearch(false); });
  $('#btn-more').addEventListener('click', () => runSearch(true));
  $('#btn-bulk-retry').addEventListener('click', () => bulk('retry', ask));
  $('#btn-bulk-cancel').addEventListener('click', () => bulk('cancel', ask));
  $('#s-all').addEventListener('change', () => {
    document.querySelectorAll('#results input.pick').forEach(c => { c.checked = $('#s-all').checked; });
    updateBulk();
  });
}
