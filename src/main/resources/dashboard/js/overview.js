// The overview: nodes, queues, limits, pipelines, schedules, throughput, the lists of transactions and events.
import { $, text, el, txLink, cell, fillRows, shortTx, latestWins } from './dom.js';
import { api } from './api.js';
import { refreshHour } from './hour.js';
import { readAudit, drawAudit, wireAudit } from './audit.js';

function ageSeconds(now, then) { return ((Date.parse(now) - Date.parse(then)) / 1000).toFixed(1) + ' s'; }

function renderCluster(c) {
  fillRows('#nodes', Object.entries(c.nodes), 'node-row', (tr, [id, n]) => {
    cell(tr, id); cell(tr, n.group); cell(tr, (n.roles || []).join(', '));
    cell(tr, n.beat ? ageSeconds(c.now, n.beat) : '?');
    cell(tr, n.busy + ' / ' + n.workers); cell(tr, n.version);
  });
  fillRows('#queues', Object.entries(c.queues), 'group-row', (tr, [g, l]) => {
    tr.dataset.group = g;
    cell(tr, g); cell(tr, l.in); cell(tr, l.out); cell(tr, l.admin); cell(tr, l.waiting); cell(tr, l.held);
    cell(tr, l.inFlight);
    cell(tr, l.nodes === 0 ? '0: its work waits for a node' : l.nodes);
    if (l.nodes === 0 && l.in + l.out + l.admin > 0) { tr.classList.add('warn'); }
    cell(tr, l.state).className = 'group-state';
    const td = document.createElement('td');
    for (const action of ['pause', 'drain', 'resume']) {
      const b = el('button', 'group-' + action, action[0].toUpperCase() + action.slice(1));
      b.disabled = action === 'resume' ? l.state === 'running' : l.state !== 'running';
      b.addEventListener('click', () => groupAction(g, action));
      td.appendChild(b);
    }
    tr.appendChild(td);
  });
  // limits that hold work back or count runs: a pipeline's, or an owner's (@owner)
  const rows = [];
  Object.entries(c.queues).forEach(([g, l]) => Object.entries(l.limits || {}).forEach(([name, x]) => rows.push([g, name, x])));
  fillRows('#limits', rows, 'limit-row', (tr, [g, name, x]) => {
    cell(tr, g); cell(tr, name);
    cell(tr, x.maxConcurrency ? x.running + ' / ' + x.maxConcurrency : x.running);
    cell(tr, x.held); cell(tr, x.rateLimit || '');
  });
  const l = c.leaders || {};
  text($('#leaders'), 'Leaders: reaper ' + (l.reaper || '—') + ', archive ' + (l.archive || '—') +
    ', webhooks ' + (l.webhooks || '—') + ', scheduler ' + (l.scheduler || '—'));
  renderPartitions(c.partitions || []);
}

/** With several partitions, a badge each: its state as this node sees it, the reason and master as its title. */
function renderPartitions(parts) {
  const row = $('#partitions');
  row.replaceChildren();
  row.hidden = parts.length < 2;
  if (parts.length < 2) { return; }
  row.appendChild(el('span', null, 'Partitions: '));
  parts.forEach(p => {
    const b = el('span', 'badge partition-badge partition-' + p.state, p.partition + ' ' + p.state);
    b.dataset.partition = p.partition;
    b.title = (p.reason ? p.reason + ', ' : '') + 'since ' + p.since + (p.master ? ', master ' + p.master : '');
    row.appendChild(b);
  });
}

function renderArchive(a) {
  const p = $('#archive-state');
  text(p, 'Archive: oldest due waited ' + a.lagSeconds.toFixed(1) + ' s' +
    (a.lagging ? ' (lagging: past ' + a.lagWarningSeconds + ' s)' : '') + ', ' + a.quarantined + ' quarantined');
  p.className = a.lagging || a.quarantined > 0 ? 'warn' : '';
}

async function groupAction(group, action) {
  try {
    const s = await api('POST', '/api/v1/admin/groups/' + encodeURIComponent(group) + '/' + action);
    text($('#group-result'), 'group ' + group + ': ' + s.state + ', ' + s.inFlight + ' in flight, ' + s.queued +
      ' queued' + (s.drained === true ? ' (drained)' : ''));
  } catch (e) {
    text($('#group-result'), e.message);
  }
  refreshPolled().catch(() => {}); // a refusal shows at the next poll
}

/** A button that POSTs to path, shows a refusal where the group actions answer, and refreshes either way. */
function postButton(className, label, path) {
  const b = el('button', className, label);
  b.addEventListener('click', async () => {
    try {
      await api('POST', path);
    } catch (e) {
      text($('#group-result'), e.message);
    }
    refreshPolled().catch(() => {}); // a refusal shows at the next poll
  });
  return b;
}

function renderPipelines(all) {
  fillRows('#pipelines', Object.entries(all), 'pipeline-row', (tr, [name, p]) => {
    tr.dataset.pipeline = name;
    const drawn = document.createElement('a');
    drawn.href = '#/pipeline/' + encodeURIComponent(name);
    drawn.className = 'pipe-link';
    text(drawn, name);
    cell(tr, '').appendChild(drawn);
    cell(tr, p.nodeGroup); cell(tr, p.version);
    cell(tr, p.disabled ? 'disabled' : 'enabled').className = 'pipeline-state';
    const td = document.createElement('td');
    td.appendChild(postButton('pipeline-toggle', p.disabled ? 'Enable' : 'Disable',
      '/api/v1/pipelines/' + encodeURIComponent(name) + (p.disabled ? '/enable' : '/disable')));
    tr.appendChild(td);
  });
}

function renderSchedules(data) {
  fillRows('#schedules', data.schedules, 'schedule-row', (tr, s) => {
    tr.dataset.schedule = s.id;
    const d = s.definition;
    cell(tr, s.id); cell(tr, d.pipeline); cell(tr, d.cron ? d.cron + ' (' + d.timeZone + ')' : 'every ' + d.every);
    cell(tr, s.nextFires.length ? s.nextFires[0] : '—');
    const td = document.createElement('td');
    if (s.lastRun) { td.appendChild(txLink(s.lastRun.txId, shortTx(s.lastRun.txId) + ' ' + (s.lastRun.status || ''))); }
    tr.appendChild(td);
    cell(tr, s.fires + ' / ' + s.misses + ' / ' + s.skipped);
    cell(tr, s.paused ? 'paused by ' + s.pausedBy + (s.pauseReason ? ': ' + s.pauseReason : '') : 'active')
      .className = 'schedule-state';
    const actions = document.createElement('td');
    for (const action of [s.paused ? 'resume' : 'pause', 'trigger']) {
      actions.appendChild(postButton('schedule-' + action, action[0].toUpperCase() + action.slice(1),
        '/api/v1/admin/schedules/' + encodeURIComponent(s.id) + '/' + action));
    }
    tr.appendChild(actions);
  });
}

function renderChart(stats) {
  const values = stats.slots.map(s => s.counters.completed || 0);
  const max = Math.max(1, ...values);
  const step = values.length > 1 ? 600 / (values.length - 1) : 600;
  const points = values.map((v, i) => (i * step).toFixed(1) + ',' + (155 - v / max * 150).toFixed(1));
  $('#throughput').setAttribute('points', points.join(' '));
  const total = values.reduce((a, b) => a + b, 0);
  text($('#chart-caption'), total + ' completed in the last ' + values.length * stats.slotSeconds +
    ' s; busiest slot ' + max + ' (' + (max / stats.slotSeconds).toFixed(1) + '/s)');
}

function renderList(name, rows) {
  fillRows('#list-' + name, rows, null, (tr, t) => {
    const td = document.createElement('td');
    td.appendChild(txLink(t.txId, shortTx(t.txId)));
    tr.appendChild(td);
    cell(tr, t.type); cell(tr, t.owner); cell(tr, t.status).className = 'status-' + t.status;
  });
}

const FINAL = 'success,failed,aborted,cancelled,timeout,internal-error';

/**
 * Recently finished: what Redis still holds (list=recent, the last archive.delay) merged with the search's
 * newest finished ones, which reads the archive too, so the list does not empty once they are archived.
 */
async function recent() {
  const [live, found] = await Promise.all([api('GET', '/api/v1/admin/transactions?limit=20&list=recent'),
    api('GET', '/api/v1/admin/transactions?limit=20&status=' + FINAL)]);
  const byId = new Map();
  live.transactions.concat(found.transactions.map(t => Object.assign({ status: t.phase || t.status }, t)))
    .forEach(t => { if (!byId.has(t.txId)) { byId.set(t.txId, t); } });
  const when = t => Date.parse(t.completed || t.updated || t.created || 0) || 0;
  return [...byId.values()].sort((a, b) => when(b) - when(a)).slice(0, 20);
}

function renderEvents(data) {
  fillRows('#events', data.events, 'event-row', (tr, e) => {
    tr.dataset.kind = e.kind;
    cell(tr, new Date(e.time).toISOString()); cell(tr, e.kind); cell(tr, e.node); cell(tr, e.subject);
    cell(tr, JSON.stringify(e.details));
  });
}

function eventsQuery() {
  const q = ['limit=50'];
  if ($('#events-kind').value) { q.push('kind=' + encodeURIComponent($('#events-kind').value)); }
  if ($('#events-subject').value.trim()) { q.push('subject=' + encodeURIComponent($('#events-subject').value.trim())); }
  return '/api/v1/admin/events?' + q.join('&');
}

/** The stuck list (GET /api/v1/admin/stuck): the counts by reason, and the first 50 listed. */
function renderStuck(data) {
  const counts = Object.entries(data.counts).filter(([, n]) => n > 0);
  const p = $('#stuck-counts');
  text(p, counts.length ? 'Stuck: ' + counts.map(([r, n]) => n + ' ' + r).join(', ') : 'Nothing stuck.');
  p.className = counts.length ? 'warn' : '';
  fillRows('#stuck-list', data.stuck, 'stuck-row', (tr, s) => {
    tr.dataset.tx = s.txId;
    const td = document.createElement('td');
    td.appendChild(txLink(s.txId, shortTx(s.txId)));
    tr.appendChild(td);
    cell(tr, s.reason); cell(tr, s.since ? new Date(s.since).toISOString() : ''); cell(tr, s.owner); cell(tr, s.type);
    cell(tr, stuckDetails(s)).className = 'stuck-details';
  });
}

/**
 * A stuck entry's details in the console's words: its step counted from 1 as everywhere else on the page (the
 * entry keeps Redis's index from 0), its attempt as the detail's facts give it (the dequeues so far: 0 before its
 * first run), then what the reason adds (limit, wakeAt, waitingFor, …) as JSON.
 */
function stuckDetails(s) {
  const rest = Object.assign({}, s);
  ['txId', 'reason', 'since', 'owner', 'type', 'step', 'attempt'].forEach(k => delete rest[k]);
  Object.keys(rest).forEach(k => { if (rest[k] === '' || rest[k] == null) { delete rest[k]; } });
  const parts = [];
  if (s.step != null && s.step !== '' && !isNaN(Number(s.step))) { parts.push('step ' + (Number(s.step) + 1)); }
  if (s.attempt != null && s.attempt !== '') { parts.push('attempt ' + s.attempt); }
  if (Object.keys(rest).length) { parts.push(JSON.stringify(rest)); }
  return parts.join(' · ');
}

const polled = latestWins(() => $('#queues'));
const listed = latestWins(() => $('#events'));

/**
 * What no event announces: the nodes' heartbeats, queue lengths, pipelines, schedules, counters, the archive's lag.
 * True when drawn; false when a refresh started later was drawn first (this one's answer is older, and dropped).
 */
export async function refreshPolled() {
  const n = polled.begin();
  const [cluster, stats, pipelines, schedules, archive, stuck] = await Promise.all([api('GET', '/api/v1/cluster'),
    api('GET', '/api/v1/stats?series=5s'), api('GET', '/api/v1/pipelines'), api('GET', '/api/v1/admin/schedules'),
    api('GET', '/api/v1/admin/archive'), api('GET', '/api/v1/admin/stuck?limit=50')]);
  if (!polled.draw(n)) { return false; }
  renderCluster(cluster);
  renderPipelines(pipelines);
  renderSchedules(schedules);
  renderChart(stats);
  renderArchive(archive);
  renderStuck(stuck);
  await refreshHour(cluster.queues, false);
  return true;
}

/**
 * The lists and events: refreshed when the bridge says something changed (or polled while it is down). Each part
 * that was read is drawn even when another could not be (recent reads the archive, which may be down); the first
 * refusal is then thrown for the page to show.
 */
export async function refreshLists() {
  const n = listed.begin();
  const names = ['inplay', 'sleeping', 'exceptions'];
  const [events, audit, recently, ...lists] = await Promise.allSettled([api('GET', eventsQuery()), readAudit(),
    recent(), ...names.map(name => api('GET', '/api/v1/admin/transactions?limit=20&list=' + name))]);
  if (!listed.draw(n)) { return; }
  if (events.status === 'fulfilled') { renderEvents(events.value); }
  names.forEach((name, i) => { if (lists[i].status === 'fulfilled') { renderList(name, lists[i].value.transactions); } });
  if (recently.status === 'fulfilled') { renderList('recent', recently.value); }
  drawAudit(audit.value);
  const refused = [events, recently, ...lists].find(x => x.status === 'rejected');
  if (refused) { throw refused.reason; }
}

export function wireOverview(changed) {
  $('#events-kind').addEventListener('change', changed);
  $('#events-subject').addEventListener('change', changed);
  wireAudit(changed);
}
