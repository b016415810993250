// A pipeline's versions (GET /api/v1/pipelines/<name>/versions): listed newest first, and two of them drawn side by
// side (…/versions/<version>: the definition and each step's numbers over the last hour), their differences marked
// in words and colour: a step only in the left one is removed, only in the right one added, one in both but not
// the same changed (naming what changed); steps are matched in order by their definitions (a longest common run).
import { $, text, el, cell, fillRows } from './dom.js';
import { api } from './api.js';
import { drawSteps } from './pipeline.js';

let shown = null; // the pipeline whose versions are on screen
let wired = false;
let comparing = 0; // each compare takes the next number, and a new pipeline shown one more: only the latest is drawn

function when(iso) { return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : 'before times were kept'; }

/** The fields of two JSON objects whose values differ ('params.url', 'timeout'), params looked into. */
function changedFields(a, b) {
  const out = [];
  const keys = new Set([...Object.keys(a || {}), ...Object.keys(b || {})]);
  for (const k of [...keys].sort()) {
    if (k === 'params' && a.params && b.params) {
      changedFields(a.params, b.params).forEach(f => out.push('params.' + f));
    } else if (JSON.stringify((a || {})[k]) !== JSON.stringify((b || {})[k])) {
      out.push(k);
    }
  }
  return out;
}

/**
 * How the steps of left and right line up: {left: [mark per step], right: [...]} where a mark is null (the same),
 * 'removed', 'added' or 'changed: <fields>' (a removed step and an added one in the same place are one change).
 */
export function compareSteps(left, right) {
  const a = left.map(s => JSON.stringify(s));
  const b = right.map(s => JSON.stringify(s));
  const lcs = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const marks = { left: new Array(a.length).fill(null), right: new Array(b.length).fill(null) };
  let gone = [];
  let come = [];
  // a gap (what only one side has) is settled where the sides meet again: removed and added steps paired in order
  // are changes
  const settle = () => {
    // each removed step pairs with an added one of its type if there is one, else with the next one left over
    const pair = new Map();
    const free = new Set(come);
    gone.forEach(x => {
      const y = come.find(c => free.has(c) && right[c].type === left[x].type);
      if (y !== undefined) { pair.set(x, y); free.delete(y); }
    });
    gone.filter(x => !pair.has(x)).forEach(x => {
      const y = come.find(c => free.has(c));
      if (y !== undefined) { pair.set(x, y); free.delete(y); }
    });
    gone.forEach(x => {
      if (pair.has(x)) {
        const what = 'changed: ' + changedFields(left[x], right[pair.get(x)]).join(', ');
        marks.left[x] = what;
        marks.right[pair.get(x)] = what;
      } else {
        marks.left[x] = 'removed';
      }
    });
    free.forEach(y => { marks.right[y] = 'added'; });
    gone = [];
    come = [];
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      settle();
      i++;
      j++;
    } else if (j >= b.length || (i < a.length && lcs[i + 1][j] >= lcs[i][j + 1])) {
      gone.push(i++);
    } else {
      come.push(j++);
    }
  }
  settle();
  return marks;
}

function column(v, marks, side) {
  const box = el('div', 'compare-side');
  box.dataset.version = v.version;
  box.dataset.side = side;
  box.appendChild(el('h4', null, (side === 'left' ? 'Left: ' : 'Right: ') + v.version + (v.current ? ' (current)' : '')));
  box.appendChild(el('p', 'hint', 'published ' + when(v.publishedAt)));
  const f = v.figures;
  if (f) {
    box.appendChild(el('p', 'version-figures', 'last hour: ' + f.started + ' started · ' + f.failed + ' failed · ' +
      'slowest step p99 ' + (f.p99Ms == null ? (f.started ? '> 33 min or none timed' : '–') : '≤ ' + f.p99Ms + ' ms')));
  }
  box.appendChild(drawSteps(v.definition, v.stepStats, i => marks[i]));
  return box;
}

async function compare(name) {
  const a = $('#compare-a').value;
  const b = $('#compare-b').value;
  const out = $('#versions-compare');
  if (!a || !b) { return; }
  const mine = ++comparing;
  const path = '/api/v1/pipelines/' + encodeURIComponent(name) + '/versions/';
  try {
    const [left, right] = await Promise.all([api('GET', path + a), api('GET', path + b)]);
    if (mine !== comparing) { return; } // a later compare, or another pipeline, was asked for
    const marks = compareSteps(left.definition.steps || [], right.definition.steps || []);
    const top = changedFields(Object.assign({}, left.definition, { steps: null }),
      Object.assign({}, right.definition, { steps: null }));
    const counts = ['added', 'removed', 'changed'].map(k => [k, marks.left.concat(marks.right)
      .filter(m => m && m.startsWith(k)).length / (k === 'changed' ? 2 : 1)]).filter(([, n]) => n > 0);
    text($('#compare-summary'), a === b ? 'The same version on both sides.' : 'Steps: ' +
      (counts.length ? counts.map(([k, n]) => n + ' ' + k).join(', ') : 'the same') +
      (top.length ? '; the pipeline\'s own fields that differ: ' + top.join(', ') : ''));
    out.replaceChildren(column(left, marks.left, 'left'), column(right, marks.right, 'right'));
    out.dataset.compared = a + ' ' + b;
  } catch (e) {
    if (mine === comparing && e.message !== 'unauthorized') { text($('#compare-summary'), 'not drawn: ' + e.message); }
  }
}

/** A pipeline's drawing begins: a compare still out for another pipeline is not drawn, even if this drawing fails. */
export function openingVersions(name) {
  if (shown !== name) { comparing++; }
}

/** Lists the versions (an answer of …/versions) and fills the two choices: the one before the current, and it. */
export function renderVersions(name, data) {
  fillRows('#versions', data.versions, 'version-row', (tr, v) => {
    tr.dataset.version = v.version;
    cell(tr, '').appendChild(el('code', null, v.version));
    cell(tr, when(v.publishedAt)); cell(tr, v.steps); cell(tr, v.current ? 'current' : '');
  });
  if (data.more) {
    const tr = el('tr');
    cell(tr, data.more + ' older version(s) not listed').colSpan = 4;
    $('#versions tbody').appendChild(tr);
  }
  for (const sel of ['#compare-a', '#compare-b']) {
    $(sel).replaceChildren(...data.versions.map(v => {
      const o = el('option', null, v.version + (v.current ? ' (current)' : '') + ' · ' + when(v.publishedAt));
      o.value = v.version;
      return o;
    }));
  }
  const at = data.versions.findIndex(v => v.current);
  const right = at >= 0 ? at : 0;
  $('#compare-b').value = data.versions[right] ? data.versions[right].version : '';
  const left = data.versions[right + 1] || data.versions[right];
  $('#compare-a').value = left ? left.version : '';
  $('#compare-form').hidden = data.versions.length < 2;
  if (shown !== name) {
    shown = name;
    comparing++;
    $('#versions-compare').replaceChildren();
    delete $('#versions-compare').dataset.compared;
    text($('#compare-summary'), data.versions.length < 2 ? 'Only one version so far.' : '');
  }
  if (!wired) {
    wired = true;
    $('#compare-form').addEventListener('submit', (e) => { e.preventDefault(); compare(shown); });
  }
}
