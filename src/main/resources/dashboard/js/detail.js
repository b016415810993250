// One transaction's life on one screen, opened in place at #/tx/<txId>: its state and the actions that apply,
// its timeline, its tree (parent, children, branches, compensation), its steps, and its JSON folded.
import { $, text, el, txLink, latestWins } from './dom.js';
import { detail } from './api.js';
import { renderTimeline } from './timeline.js';
import { renderActions } from './actions.js';
import { renderAwaiting } from './awaiting.js';

let shown = null; // the txId on screen
let linked = new Set(); // the txIds its tree shows: a completion of one of them redraws it
const drawing = latestWins(() => $('#detail'));

export function current() { return shown; }

/** Whether a pushed completion of txId changes what is on screen. */
export function concerns(txId) { return shown !== null && (txId === shown || linked.has(txId)); }

function json(pre, value) { text(pre, value == null ? '(none)' : JSON.stringify(value, null, 2)); }

function chars(value) { return value == null ? 0 : JSON.stringify(value).length; }

function facts(d) {
  const s = d.summary;
  const parts = ['pipeline ' + s.type, 'owner ' + s.owner];
  if (s.externalId) { parts.push('externalId ' + s.externalId); }
  parts.push('created ' + s.created);
  if (s.completed) { parts.push('ended ' + s.completed); }
  parts.push('attempt ' + s.attempt + (d.node ? ' on ' + d.node : ''));
  if (d.priority) { parts.push('priority ' + d.priority); }
  if (s.retry && s.retry.nextAttemptAt) {
    parts.push('retry ' + s.retry.attempt + ' of ' + s.retry.maxAttempts + ' due ' + s.retry.nextAttemptAt);
  }
  if (s.gate) { parts.push(gate(s.gate)); }
  if (s.note) { parts.push('note: ' + s.note); }
  if (d.archived) { parts.push('archived'); }
  return parts.join(' · ');
}

/** The gate its start passed or waited on (debounce, throttle, singleton), in a few words. */
function gate(g) {
  const how = g.outcome === 'waiting' ? 'waiting behind ' + g.behind
    : g.outcome === 'queued' ? 'queued to ' + g.startAt
    : g.outcome === 'delayed' ? (g.starts || 1) + ' start(s) folded, due ' + g.startAt
    : 'passed' + (g.waited ? ' at ' + g.waited : '');
  return g.kind + ' ' + g.key + ': ' + how;
}

/** A tree entry: a link to the transaction, what it is to this one, and its pipeline and status once read. */
function node(what, id) {
  const li = el('li', 'tree-node');
  li.dataset.tx = id;
  li.appendChild(el('span', 'tree-what', what + ' '));
  li.appendChild(txLink(id));
  const info = el('span', 'tree-info');
  li.appendChild(info);
  detail(id).then(x => {
    text(info, ' ' + x.summary.type + ' ');
    info.appendChild(el('span', 'status-' + x.summary.status, x.summary.status));
  }).catch(e => text(info, ' (' + e.message + ')'));
  return li;
}

function renderTree(d) {
  const tree = $('#tree');
  tree.replaceChildren();
  linked = new Set();
  const add = (parent, what, id) => { if (id) { linked.add(id); parent.appendChild(node(what, id)); } };
  let into = tree;
  if (d.parent) {
    add(tree, 'parent', d.parent);
    into = el('ul');
    tree.lastChild.appendChild(into);
  }
  const self = el('li', 'tree-node self');
  self.appendChild(el('strong', null, 'this one '));
  self.appendChild(el('span', 'status-' + d.summary.status, d.summary.status));
  into.appendChild(self);
  const below = el('ul');
  add(below, 'waits for child', d.child);
  (d.branches || []).slice(0, 50).forEach((id, i) => add(below, 'branch ' + (i + 1), id));
  if (d.compensationFor) { add(below, 'compensates', d.compensationFor); }
  if (d.summary.compensation && d.summary.compensation.txId) {
    add(below, 'its compensation', d.summary.compensation.txId);
  }
  if (below.children.length) { self.appendChild(below); }
  if ((d.branches || []).length > 50) { below.appendChild(el('li', 'hint', (d.branches.length - 50) + ' more branches')); }
}

function renderSteps(d) {
  const steps = $('#detail-steps');
  steps.replaceChildren();
  d.steps.forEach(s => {
    const li = el('li', s.state, s.type + ' — ' + s.state +
      (s.durationMs != null ? ', last attempt ' + s.durationMs + ' ms from ' + s.started : '') +
      (s.params ? ' ' + JSON.stringify(s.params) : ''));
    li.value = s.step;
    steps.appendChild(li);
  });
}

function render(d, source) {
  const s = d.summary;
  const box = $('#detail');
  box.dataset.tx = s.txId;
  box.dataset.status = s.status;
  box.dataset.source = source;
  text($('#detail-tx'), s.txId);
  const status = $('#detail-status');
  text(status, s.status + ' / ' + s.processingState + (s.paused ? ' - paused since ' + s.paused.since + ' by ' +
    s.paused.by + (s.paused.reason ? ': ' + s.paused.reason : '') : ''));
  status.className = 'badge status-' + s.status;
  text($('#detail-facts'), facts(d));
  $('#detail-pipeline').href = '#/pipeline/' + encodeURIComponent(s.type);
  // after an action, read it again: unless the reader has gone back to the overview or opened another meanwhile
  const again = () => { if (shown === s.txId) { openDetail(s.txId, 'action'); } };
  renderActions(d, again);
  renderAwaiting(d, again);
  renderTimeline($('#timeline'), d, Date.now());
  renderTree(d);
  renderSteps(d);
  const w = s.webhook;
  text($('#detail-webhook'), w ? 'webhook: ' + w.status + (w.attempts != null ? ' after ' + w.attempts + ' attempt(s)' : '') +
    (w.lastError ? ', last error ' + w.lastError : '') : '');
  json($('#detail-input'), d.input);
  json($('#detail-output'), s.output);
  text($('#detail-output-label'), 'Output' + (s.output != null ? ' (' + chars(s.output) + ' characters of JSON)' : ''));
  json($('#detail-data'), d.data);
  json($('#detail-summary'), s);
  text($('#detail-log'), d.events.length ? d.events.map(e => JSON.stringify(e)).join('\n') : '(none)');
}

/**
 * Shows txId's detail (source says why: open, push, poll, action) while it is the one shown: latest wins, so a
 * slower older read never draws over a newer one, and reads that take longer than the 3 s poll still draw.
 * Opening a new one brings it to the top of the page, its heading focused for keyboard and screen readers.
 */
export async function openDetail(txId, source) {
  const mine = drawing.begin();
  const fresh = txId !== shown;
  shown = txId;
  if (fresh) { $('#detail').dataset.pushed = '0'; }
  try {
    const d = await detail(txId);
    if (txId !== shown || !drawing.draw(mine)) { return; }
    render(d, source);
    if (fresh) { text($('#action-result'), ''); }
  } catch (e) {
    if (txId !== shown || e.message === 'unauthorized' || !drawing.draw(mine)) { return; }
    $('#detail').dataset.tx = txId;
    text($('#detail-tx'), txId);
    text($('#detail-status'), 'not shown: ' + e.message);
  }
  if (fresh) {
    window.scrollTo(0, 0);
    $('#detail-title').focus({ preventScroll: true });
  }
}

/** Leaves the detail: a read still out for it is not drawn (nor scrolls the page) when it answers. */
export function closeDetail() { shown = null; linked = new Set(); }
