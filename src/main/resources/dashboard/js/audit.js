// The audit log (GET /api/v1/admin/audit, README "Audit log"): every admin act, newest first, by key or outcome.
import { $, cell, fillRows, text } from './dom.js';
import { api } from './api.js';

function auditQuery() {
  const q = ['limit=50'];
  const owner = $('#audit-owner').value.trim();
  if (owner) { q.push('owner=' + encodeURIComponent(owner)); }
  if ($('#audit-outcome').value) { q.push('outcome=' + encodeURIComponent($('#audit-outcome').value)); }
  return '/api/v1/admin/audit?' + q.join('&');
}

/** Reads the latest 50 acts that match the filters: { data }, or { error } on a node without an archive. */
export async function readAudit() {
  try {
    return { data: await api('GET', auditQuery()) };
  } catch (e) {
    return { error: e };
  }
}

/** Draws what readAudit read; a node without an archive says so instead. */
export function drawAudit(read) {
  if (read.error) {
    text($('#audit-state'), 'The audit log is not readable here: ' + read.error.message);
    return;
  }
  const data = read.data;
  text($('#audit-state'), data.entries.length ? '' : 'No admin act matches.');
  fillRows('#audit', data.entries, 'audit-row', (tr, a) => {
    tr.dataset.outcome = a.outcome;
    if (a.outcome !== 'ok') { tr.classList.add('warn'); }
    cell(tr, a.time); cell(tr, a.keyId + ' (' + a.owner + ')'); cell(tr, a.action); cell(tr, a.target);
    cell(tr, a.outcome + ' ' + a.status + (a.error ? ' ' + a.error : '')); cell(tr, a.remote);
  });
}

export function wireAudit(changed) {
  $('#audit-owner').addEventListener('change', changed);
  $('#audit-outcome').addEventListener('change', changed);
}
