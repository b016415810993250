// The Conveyor dashboard: plain ES modules, no build step, nothing fetched but this node's own API and bridge.
// Routes: #/ the overview, #search?… a kept search, #/tx/<txId> one transaction's detail in place.
import { $, text } from './dom.js';
import { key, keepKey, forgetKey, onRefused } from './api.js';
import { refreshPolled, refreshLists, wireOverview } from './overview.js';
import { runSearch, searchFromAddress, wireSearch, completed } from './search.js';
import { openDetail, closeDetail, concerns, current } from './detail.js';
import { ask } from './actions.js';
import { openPipeline } from './pipeline.js';
import { connect } from './live.js';

let live = false;
let bridge = null;
let listsDue = false;
let overviewHash = '#/';

function showKeyForm(message) {
  if (bridge) { bridge.close(); bridge = null; }
  $('#main').hidden = true;
  $('#btn-forget').hidden = true;
  $('#key-form').hidden = false;
  text($('#error'), message || '');
  $('#error').hidden = !message;
}

function error(e) {
  if (e.message !== 'unauthorized') { text($('#error'), e.message); $('#error').hidden = false; }
}

function route() {
  const m = /^#\/tx\/(tx-[0-9a-f]+)$/.exec(location.hash);
  const pipe = /^#\/pipeline\/(.+)$/.exec(location.hash);
  $('#view-overview').hidden = !!(m || pipe);
  $('#detail').hidden = !m;
  $('#pipeline-view').hidden = !pipe;
  document.querySelectorAll('a.back').forEach(a => { a.href = overviewHash; });
  if (m) {
    openDetail(m[1], 'open');
    return;
  }
  if (pipe) {
    window.scrollTo(0, 0);
    openPipeline(decodeURIComponent(pipe[1])).then(() => $('#pipeline-heading').focus({ preventScroll: true }));
    return;
  }
  closeDetail();
  if (searchFromAddress()) { runSearch(false); }
  refresh(true);
}

const flight = { busy: false, polled: false, lists: false }; // a refresh out, and what was asked for meanwhile

/**
 * Polls what no fact announces (unless polled is false); the lists and events too while the bridge is down (or when
 * asked). One at a time: asked while one is out, it runs once more after it, for all that was asked meanwhile, so a
 * slow node or a burst of facts never piles reads up in the browser's few connections, ahead of an operator's POST.
 */
async function refresh(lists, polled = true) {
  if (flight.busy) {
    flight.polled = flight.polled || polled;
    flight.lists = flight.lists || lists;
    return;
  }
  flight.busy = true;
  try {
    for (let round = [lists, polled]; round; round = asked()) {
      if (!key() || $('#main').hidden || $('#view-overview').hidden) { return; }
      await refreshRound(...round);
    }
  } finally {
    flight.busy = false;
  }
}

/** What was asked for while a round was out ([lists, polled]), or null: and asks for nothing more. */
function asked() {
  if (!flight.polled && !flight.lists) { return null; }
  const round = [flight.lists, flight.polled];
  flight.polled = false;
  flight.lists = false;
  return round;
}

/** One round: a refusal of the polled part still lets the lists draw, then shows. */
async function refreshRound(lists, polled) {
  let refused = null;
  let drawn = false;
  if (polled) {
    try {
      drawn = await refreshPolled();
    } catch (e) {
      refused = e;
    }
  }
  try {
    if (lists || !live) { await refreshLists(); }
  } catch (e) {
    refused = refused || e;
  }
  if (refused) {
    error(refused);
    return;
  }
  if (polled) { $('#error').hidden = true; }
  if (drawn) { text($('#updated'), 'updated ' + new Date().toLocaleTimeString()); }
}

/** A pushed fact: the detail redraws when it concerns it; the lists redraw at most once a second. */
function fact(address, body) {
  if (address === 'conveyor.tx.completed') {
    completed(body.txId, body.status);
    if (concerns(body.txId)) {
      const box = $('#detail');
      box.dataset.pushed = String(Number(box.dataset.pushed || 0) + 1); // how many completions it heard
      openDetail(current(), 'push');
    }
  }
  if (address !== 'conveyor.tx.completed' || !listsDue) {
    listsDue = true;
    setTimeout(() => {
      listsDue = false;
      if (!$('#main').hidden && !$('#view-overview').hidden) {
        refresh(true, address !== 'conveyor.tx.completed');
      }
    }, address === 'conveyor.tx.completed' ? 1000 : 100);
  }
}

function liveState(on, why) {
  live = on;
  const badge = $('#live');
  text(badge, on ? 'live' : 'live: off' + (why ? ' (' + why + ')' : ''));
  badge.className = 'live ' + (on ? 'on' : 'off');
  if (on) { refresh(true); }
}

function start() {
  $('#key-form').hidden = true;
  $('#main').hidden = false;
  $('#btn-forget').hidden = false;
  if (!bridge) { bridge = connect(key(), fact, liveState); }
  route();
}

onRefused(showKeyForm);
$('#key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  keepKey($('#key').value);
  $('#key').value = '';
  start();
});
$('#btn-forget').addEventListener('click', () => { forgetKey(); showKeyForm(); });
document.querySelector('a.skip').addEventListener('click', (e) => { e.preventDefault(); $('#main').focus(); });
window.addEventListener('hashchange', (e) => {
  const old = new URL(e.oldURL).hash;
  if (!old.startsWith('#/tx/') && !old.startsWith('#/pipeline/')) { overviewHash = old || '#/'; }
  if (key()) { route(); }
});
wireSearch(ask);
wireOverview(() => refresh(true));
if (key()) { start(); } else { showKeyForm(); }
// what has no fact is polled every 3 s; a shown detail only while the bridge is down (else its facts redraw it)
setInterval(() => {
  if (!$('#detail').hidden && current() && !live) { openDetail(current(), 'poll'); } else { refresh(false); }
}, 3000);
