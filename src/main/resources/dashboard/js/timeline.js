// A transaction's life on one time axis: a row per step with each attempt as a bar (and the waits between them:
// queued, sleeping, waiting for children or an event, retry wait), a row for its earlier runs and one for its
// compensation; below, every attempt in a table with its time, node, outcome and output size.
import { el, text, txLink, cell, fillRows, size, duration } from './dom.js';

const WAITS = { 'util/delay': 'sleeping', 'util/wait': 'sleeping', 'util/child-pipeline': 'waiting',
  'flow/parallel': 'waiting', 'flow/await': 'waiting' };
const KINDS = { queued: 'queued', running: 'running', failed: 'failed attempt', sleeping: 'sleeping',
  waiting: 'waiting for children or an event', retry: 'retry wait', rerun: 'ended, then run again' };

/** Pairs each failed attempt's error (summary.errors) with its recorded time: same step, ended within 5 s. */
function withErrors(attempts, errors) {
  const left = (errors || []).filter(e => !e.summary).map(e => Object.assign({ ms: Date.parse(e.at) }, e));
  const counts = {};
  return attempts.map(a => {
    const start = Date.parse(a.started);
    const end = start + a.durationMs;
    let best = -1;
    let gap = 5000;
    left.forEach((e, i) => {
      const g = Math.abs(e.ms - end);
      if (e.step === a.step && g <= gap) { best = i; gap = g; }
    });
    const error = best >= 0 ? left.splice(best, 1)[0] : null;
    counts[a.step] = error && error.attempt ? error.attempt : (counts[a.step] || 0) + 1;
    return Object.assign({ start, end, error, n: counts[a.step] }, a);
  }).sort((a, b) => a.start - b.start);
}

/** The segments to draw: {row (a step, from 1), kind, from, to, attempt?} in ms, and the axis's ends. */
export function model(d, now) {
  const s = d.summary;
  const typeOf = (n) => (d.steps[n - 1] || {}).type || '';
  const attempts = withErrors(d.attempts || [], s.errors);
  // the last step's output is the transaction's: the completion records no size, the summary has the output
  const final = attempts[attempts.length - 1];
  if (final && s.status === 'success' && !final.error && final.outputSize == null && s.output != null) {
    final.outputSize = JSON.stringify(s.output).length;
  }
  const runEnds = (s.runs || []).filter(r => !r.summary && r.completed).map(r => Date.parse(r.completed));
  const created = Date.parse(s.created);
  const segs = [];
  let prev = null;
  attempts.forEach((a, i) => {
    const from = prev ? prev.end : created;
    if (a.start > from) {
      const rerun = prev && runEnds.some(t => t >= prev.end - 5 && t <= a.start);
      const kind = rerun ? 'rerun' : !prev ? 'queued' : prev.step === a.step && prev.error ? 'retry'
        : WAITS[typeOf(a.step)] || 'queued';
      segs.push({ row: a.step, kind, from, to: a.start });
    }
    segs.push({ row: a.step, kind: a.error ? 'failed' : 'running', from: a.start, to: a.end, attempt: a, index: i });
    prev = a;
  });
  const last = prev ? prev.end : created;
  const ended = s.completed ? Date.parse(s.completed) : null;
  const at = d.steps.find(x => x.state === 'current' || x.state === 'ended');
  const row = at ? at.step : prev ? prev.step : 1;
  if (!ended) {
    const state = s.processingState;
    const kind = state === 'processing' ? 'running' : state === 'sleeping'
      ? (s.retry ? 'retry' : WAITS[typeOf(row)] || (d.child || d.branches ? 'waiting' : 'sleeping')) : 'queued';
    segs.push({ row, kind, from: last, to: Math.max(now, last), open: true });
  } else if (ended > last + 1 && !(prev && prev.error && prev.step === row)) {
    segs.push({ row, kind: WAITS[typeOf(row)] || 'queued', from: last, to: ended });
  }
  const t0 = Math.min(created, ...segs.map(g => g.from));
  const t1 = Math.max(ended || now, ...segs.map(g => g.to), t0 + 1);
  return { t0, t1, segs, attempts, runEnds };
}

function place(span, t0, t1, from, to) {
  span.style.left = ((from - t0) / (t1 - t0) * 100).toFixed(3) + '%';
  if (to != null) { span.style.width = ((to - from) / (t1 - t0) * 100).toFixed(3) + '%'; }
}

function clock(ms) { return new Date(ms).toISOString().replace('T', ' ').replace('Z', ''); }

function describe(g, typeOf) {
  const a = g.attempt;
  if (!a) {
    return KINDS[g.kind] + (g.open ? ' (now)' : '') + ': ' + duration(g.to - g.from) + ' from ' + clock(g.from);
  }
  return 'step ' + a.step + ' (' + typeOf(a.step) + ') attempt ' + a.n + ' at ' + clock(a.start) + ', took ' +
    duration(a.durationMs) + (a.node ? ' on ' + a.node : '') + (a.error ? ': ' + a.error.code +
    (a.error.message && a.error.message !== a.error.code ? ' - ' + a.error.message : '') : '') +
    (a.outputSize != null ? ', output ' + size(a.outputSize) : '');
}

function track(label, className) {
  const row = el('div', 'tl-row' + (className ? ' ' + className : ''));
  const head = el('div', 'tl-label');
  if (typeof label === 'string') { text(head, label); } else { head.appendChild(label); }
  row.appendChild(head);
  const t = el('div', 'tl-track');
  row.appendChild(t);
  return [row, t];
}

/** Draws the timeline into box and the attempts into the #attempts table. */
export function renderTimeline(box, d, now) {
  const m = model(d, now);
  const typeOf = (n) => (d.steps[n - 1] || {}).type || '?';
  const rows = el('div', 'tl');
  const axis = el('div', 'tl-axis');
  axis.appendChild(el('span', null, clock(m.t0)));
  axis.appendChild(el('span', null, duration(m.t1 - m.t0)));
  axis.appendChild(el('span', null, clock(m.t1)));
  rows.appendChild(axis);
  const count = Math.max(d.steps.length, ...m.segs.map(g => g.row));
  for (let n = 1; n <= count; n++) {
    const [row, t] = track(n + ' · ' + typeOf(n), 'tl-step');
    row.dataset.step = n;
    m.segs.filter(g => g.row === n).forEach(g => {
      const bar = el('span', 'tl-bar ' + g.kind + (g.attempt ? ' attempt-bar' : ''));
      if (g.attempt) { bar.dataset.index = g.index; }
      bar.title = describe(g, typeOf);
      bar.setAttribute('aria-label', bar.title);
      place(bar, m.t0, m.t1, g.from, g.to);
      t.appendChild(bar);
    });
    rows.appendChild(row);
  }
  const runs = (d.summary.runs || []).filter(r => !r.summary && r.completed);
  if (runs.length) {
    const [row, t] = track('earlier runs', 'tl-runs');
    runs.forEach((r, i) => {
      const mark = el('span', 'tl-mark status-' + r.status);
      mark.title = 'run ' + (i + 1) + ' ended ' + r.status + ' at step ' + r.step + ', ' + r.completed +
        (r.note ? ': ' + r.note : '');
      mark.setAttribute('aria-label', mark.title);
      place(mark, m.t0, m.t1, Date.parse(r.completed));
      t.appendChild(mark);
    });
    rows.appendChild(row);
  }
  const c = d.summary.compensation;
  if (c && c.txId) {
    const label = el('span');
    label.appendChild(text(el('span'), 'compensation '));
    label.appendChild(txLink(c.txId, c.pipeline || 'compensation'));
    const [row, t] = track(label, 'tl-compensation');
    const mark = el('span', 'tl-mark status-' + c.status);
    mark.title = 'its compensation ' + (c.pipeline || '') + ' ' + c.status + (c.note ? ': ' + c.note : '');
    place(mark, m.t0, m.t1, d.summary.completed ? Date.parse(d.summary.completed) : m.t1);
    t.appendChild(mark);
    t.appendChild(el('span', 'tl-note', c.status));
    rows.appendChild(row);
  }
  const legend = el('p', 'tl-legend');
  for (const [k, v] of Object.entries(KINDS)) {
    const item = el('span');
    item.appendChild(el('i', 'tl-key ' + k));
    item.appendChild(text(el('span'), v));
    legend.appendChild(item);
  }
  rows.appendChild(legend);
  box.replaceChildren(rows);
  if (m.attempts.length === 0) {
    rows.appendChild(el('p', 'hint', 'No attempt recorded yet: a step that sleeps, or waits for a child or branches, ' +
      'is timed by the attempt that runs after it (its wait is drawn above).'));
  }
  fillRows('#attempts', m.attempts, 'attempt-row', (tr, a) => {
    tr.dataset.started = a.started;
    tr.dataset.step = a.step;
    cell(tr, m.attempts.indexOf(a) + 1); cell(tr, a.step + ' · ' + typeOf(a.step)); cell(tr, a.n);
    cell(tr, clock(a.start)).className = 'attempt-time'; cell(tr, duration(a.durationMs)); cell(tr, a.node || '');
    cell(tr, a.error ? 'failed: ' + a.error.code + (a.error.message && a.error.message !== a.error.code
      ? ' - ' + a.error.message : '') : 'done').className = a.error ? 'status-failed' : 'status-success';
    cell(tr, size(a.outputSize));
  });
  return m;
}
