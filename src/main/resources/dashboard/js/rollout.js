// A pipeline's rollout (GET /api/v1/admin/pipelines/<name>/rollout): the canary and the stable version side by side
// with each one's share of new starts and its figures over the last hour (…/versions/<version>: started, failed,
// p99), so the canary is seen failing before the rest do; Promote and Roll back, each asked first.
import { $, text, el, cell, fillRows } from './dom.js';
import { api } from './api.js';
import { ask } from './actions.js';

const ACTS = {
  promote: { label: 'Promote', says: (r) => 'Give every new start to the canary ' + r.version + '; the stable ' +
    r.stable + ' takes none from now on. Transactions keep the version they started on.' },
  rollback: { label: 'Roll back', says: (r) => 'Give every new start to the stable ' + r.stable + ' again, as ' +
    'before the canary was uploaded; transactions already on the canary ' + r.version + ' finish on it.' }
};
let wired = false;
let current = null; // {name, state, reopen}

/** The versions the table shows: during a rollout the canary and the stable, after one its two versions. */
function rowsOf(r) {
  if (r.state === 'canary') {
    return [{ version: r.version, role: 'canary', share: r.share }, { version: r.stable, role: 'stable', share: 100 - r.share }];
  }
  const rows = [{ version: r.version, role: r.state === 'promoted' ? 'promoted canary' : 'stable (rolled back to)', share: 100 }];
  if (r.canary && r.canary !== r.version) { rows.push({ version: r.canary, role: 'rolled back', share: 0 }); }
  return rows;
}

function rate(f) {
  return f && f.ended ? ' (' + Math.round(100 * f.failed / f.ended) + ' % of ' + f.ended + ' ended)' : '';
}

async function act(action) {
  const r = current;
  if (!r) { return; } // another pipeline's drawing is under way: its own rollout is not drawn yet
  const a = ACTS[action];
  if (!(await ask(a.label + ' the rollout of ' + r.name + ': ' + a.says(r)))) {
    text($('#rollout-result'), a.label + ': not done');
    return;
  }
  try {
    const after = await api('POST', '/api/v1/admin/pipelines/' + encodeURIComponent(r.name) + '/rollout', { action });
    text($('#rollout-result'), a.label + ': every new start now runs ' + after.version);
  } catch (e) {
    text($('#rollout-result'), a.label + ' refused: ' + e.message);
  }
  r.reopen();
}

/** A pipeline's drawing begins (another's, or this one's again): Promote and Roll back act on nothing until its rollout is drawn. */
export function forgetRollout() {
  current = null;
  $('#rollout-actions').hidden = true;
  delete $('#rollout').dataset.state;
}

/**
 * Shows the rollout of pipeline name (hidden when it never had one); latest() says whether this drawing is still
 * the one asked for last (when not, it stops), reopen draws the pipeline view again.
 */
export async function renderRollout(name, latest, reopen) {
  const box = $('#rollout');
  const r = await api('GET', '/api/v1/admin/pipelines/' + encodeURIComponent(name) + '/rollout');
  if (!latest()) { return; }
  box.hidden = r.state === 'none';
  if (box.hidden) { box.dataset.state = r.state; return; }
  text($('#rollout-state'), r.state === 'canary' ? 'Canary ' + r.version + ' takes ' + r.share + ' % of new starts, ' +
    'the stable ' + r.stable + ' the rest (since ' + r.at + ').' : 'The rollout of ' + r.canary + ' was ' +
    (r.state === 'promoted' ? 'promoted' : 'rolled back') + ' at ' + r.at + '.');
  const rows = rowsOf(r);
  const path = '/api/v1/pipelines/' + encodeURIComponent(name) + '/versions/';
  const figures = await Promise.all(rows.map(v => api('GET', path + v.version).then(x => x.figures, () => null)));
  if (!latest()) { return; }
  rows.forEach((v, i) => { v.figures = figures[i]; });
  fillRows('#rollout-versions', rows, 'rollout-row', (tr, v) => {
    const f = v.figures || {};
    tr.dataset.version = v.version;
    tr.dataset.role = v.role;
    cell(tr, '').appendChild(el('code', null, v.version));
    cell(tr, v.role); cell(tr, v.share + ' %'); cell(tr, f.started == null ? '' : f.started);
    cell(tr, f.failed == null ? '' : f.failed + rate(f));
    cell(tr, f.p99Ms == null ? (f.started ? '> 33 min or none timed' : '') : '≤ ' + f.p99Ms + ' ms');
  });
  $('#rollout-actions').hidden = r.state !== 'canary';
  current = Object.assign({ reopen }, r);
  box.dataset.state = r.state; // drawn: what a reader waits on
  if (!wired) {
    wired = true;
    $('#btn-promote').addEventListener('click', () => act('promote'));
    $('#btn-rollback').addEventListener('click', () => act('rollback'));
  }
}
