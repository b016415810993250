// The Conveyor dashboard: plain JavaScript, no build step, nothing fetched but this node's own API.
(function () {
  'use strict';
  const KEY = 'conveyorAdminKey';
  const $ = (sel) => document.querySelector(sel);
  let selected = null;

  function key() { return localStorage.getItem(KEY); }

  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: Object.assign({ 'Authorization': 'Bearer ' + key() },
        body === undefined ? {} : { 'Content-Type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body)
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    if (res.status === 401 || res.status === 403) {
      localStorage.removeItem(KEY);
      showKeyForm((json && json.detail) || 'the key was refused');
      throw new Error('unauthorized');
    }
    if (!res.ok) { throw new Error((json && (json.detail || json.title)) || res.statusText); }
    return json;
  }

  function text(el, value) { el.textContent = value == null ? '' : String(value); return el; }
  /** A link that opens a transaction's detail (shown as label, or its txId). */
  function txLink(id, label) {
    const a = document.createElement('a');
    a.className = 'tx-link';
    a.dataset.tx = id;
    text(a, label || id);
    a.title = id;
    a.addEventListener('click', () => openDetail(id));
    return a;
  }
  function cell(row, value) { row.appendChild(text(document.createElement('td'), value)); }
  /** Fills the table's body anew: a row for each item (of class className, when given), as fill writes it. */
  function fillRows(table, items, className, fill) {
    const body = $(table + ' tbody');
    body.replaceChildren();
    items.forEach(item => {
      const tr = document.createElement('tr');
      if (className) { tr.className = className; }
      fill(tr, item);
      body.appendChild(tr);
    });
  }

  function showKeyForm(message) {
    $('#main').hidden = true;
    $('#btn-forget').hidden = true;
    $('#key-form').hidden = false;
    text($('#error'), message || '');
    $('#error').hidden = !message;
  }

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
      cell(tr, l.state);
      tr.lastChild.className = 'group-state';
      const td = document.createElement('td');
      for (const action of ['pause', 'drain', 'resume']) {
        const b = document.createElement('button');
        b.className = 'group-' + action;
        text(b, action[0].toUpperCase() + action.slice(1));
        b.disabled = action === 'resume' ? l.state === 'running' : l.state !== 'running';
        b.addEventListener('click', () => groupAction(g, action));
        td.appendChild(b);
      }
      tr.appendChild(td);
    });
    // limits that hold work back or count runs: a pipeline's, or an owner's (@owner)
    const lim = $('#limits tbody');
    lim.replaceChildren();
    Object.entries(c.queues).forEach(([g, l]) => {
      Object.entries(l.limits || {}).forEach(([name, x]) => {
        const tr = document.createElement('tr');
        tr.className = 'limit-row';
        cell(tr, g); cell(tr, name);
        cell(tr, x.maxConcurrency ? x.running + ' / ' + x.maxConcurrency : x.running);
        cell(tr, x.held); cell(tr, x.rateLimit || '');
        lim.appendChild(tr);
      });
    });
    const l = c.leaders || {};
    text($('#leaders'), 'Leaders: reaper ' + (l.reaper || '—') + ', archive ' + (l.archive || '—') +
      ', webhooks ' + (l.webhooks || '—'));
  }

  function renderArchive(a) {
    const el = $('#archive-state');
    text(el, 'Archive: oldest due waited ' + a.lagSeconds.toFixed(1) + ' s' +
      (a.lagging ? ' (lagging: past ' + a.lagWarningSeconds + ' s)' : '') + ', ' + a.quarantined + ' quarantined');
    el.className = a.lagging || a.quarantined > 0 ? 'warn' : '';
  }

  async function groupAction(group, action) {
    try {
      const s = await api('POST', '/api/v1/admin/groups/' + encodeURIComponent(group) + '/' + action);
      text($('#group-result'), 'group ' + group + ': ' + s.state + ', ' + s.inFlight + ' in flight, ' + s.queued +
        ' queued' + (s.drained === true ? ' (drained)' : ''));
    } catch (e) {
      text($('#group-result'), e.message);
    }
    refresh();
  }

  /** A button that POSTs to path, shows a refusal where the group actions answer, and refreshes either way. */
  function postButton(className, label, path) {
    const b = document.createElement('button');
    b.className = className;
    text(b, label);
    b.addEventListener('click', async () => {
      try {
        await api('POST', path);
      } catch (e) {
        text($('#group-result'), e.message);
      }
      refresh();
    });
    return b;
  }

  function renderPipelines(all) {
    fillRows('#pipelines', Object.entries(all), 'pipeline-row', (tr, [name, p]) => {
      tr.dataset.pipeline = name;
      cell(tr, name); cell(tr, p.nodeGroup); cell(tr, p.version); cell(tr, p.disabled ? 'disabled' : 'enabled');
      tr.lastChild.className = 'pipeline-state';
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
      const last = s.lastRun;
      const td = document.createElement('td');
      if (last) {
        td.appendChild(txLink(last.txId, last.txId.slice(0, 15) + '… ' + (last.status || '')));
      }
      tr.appendChild(td);
      cell(tr, s.fires + ' / ' + s.misses + ' / ' + s.skipped);
      cell(tr, s.paused ? 'paused by ' + s.pausedBy + (s.pauseReason ? ': ' + s.pauseReason : '') : 'active');
      tr.lastChild.className = 'schedule-state';
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

  function renderList(name, data) {
    fillRows('#list-' + name, data.transactions, null, (tr, t) => {
      const td = document.createElement('td');
      td.appendChild(txLink(t.txId, t.txId.slice(0, 15) + '…'));
      tr.appendChild(td);
      cell(tr, t.type); cell(tr, t.owner); cell(tr, t.status);
    });
  }

  // ---- search: the form's filters live in the address (#search?status=…), so a search is a link to keep
  const FILTERS = ['status', 'pipeline', 'owner', 'externalId', 'from', 'to', 'q'];
  let nextCursor = null;

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
      box.addEventListener('change', updateBulk);
      pick.appendChild(box);
      tr.appendChild(pick);
      const td = document.createElement('td');
      td.appendChild(txLink(t.txId));
      tr.appendChild(td);
      cell(tr, t.type); cell(tr, t.phase); cell(tr, t.owner); cell(tr, t.externalId); cell(tr, t.created);
      tr.children[3].className = 'phase';
      body.appendChild(tr);
    });
    nextCursor = data.next;
    $('#btn-more').hidden = !nextCursor;
    updateBulk();
  }

  async function runSearch(append) {
    const p = searchParams();
    if (!append) { history.replaceState(null, '', '#search?' + p.toString()); }
    if (append && nextCursor) { p.set('cursor', nextCursor); }
    p.set('limit', '50');
    try {
      renderResults(await api('GET', '/api/v1/admin/transactions?' + p.toString()), append);
      text($('#search-result'), $('#results tbody').children.length + ' shown' + (nextCursor ? ', more below' : ''));
    } catch (e) {
      if (e.message !== 'unauthorized') { text($('#search-result'), 'search refused: ' + e.message); }
    }
  }

  /** Retries or cancels each selected transaction; says how many were done and why others were refused. */
  async function bulk(action) {
    const ids = selectedIds();
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

  function searchFromAddress() {
    if (!location.hash.startsWith('#search?')) { return false; }
    const p = new URLSearchParams(location.hash.slice('#search?'.length));
    FILTERS.forEach(f => { $('#s-' + f).value = p.get(f) || ''; });
    return true;
  }

  async function openDetail(txId) {
    selected = txId;
    const d = await api('GET', '/api/v1/admin/transactions/' + txId);
    $('#detail').hidden = false;
    text($('#detail-tx'), txId);
    text($('#detail-status'), d.summary.status + ' / ' + d.summary.processingState + (d.archived ? ' (archived)' : '') +
      (d.priority ? ', priority ' + d.priority : ''));
    const rerunnable = ['failed', 'cancelled', 'timeout', 'internal-error'].includes(d.summary.status);
    $('#btn-retry').hidden = !rerunnable;
    $('#btn-retry-start').hidden = !rerunnable;
    const steps = $('#detail-steps');
    steps.replaceChildren();
    d.steps.forEach(s => {
      const li = document.createElement('li');
      li.className = s.state;
      text(li, s.type + ' — ' + s.state + (s.durationMs != null ? ', ' + s.durationMs + ' ms from ' + s.started : '') +
        (s.params ? ' ' + JSON.stringify(s.params) : ''));
      steps.appendChild(li);
    });
    const branches = $('#detail-branches');
    branches.replaceChildren();
    (d.branches || []).forEach(id => {
      const li = document.createElement('li');
      li.appendChild(txLink(id));
      branches.appendChild(li);
    });
    $('#detail-branches-box').hidden = !(d.branches && d.branches.length);
    const links = $('#detail-links');
    links.replaceChildren();
    const linked = [['parent', d.parent], ['waits for child', d.child],
      ['compensates', d.summary.compensation ? null : d.compensationFor],
      ['its compensation', d.summary.compensation && d.summary.compensation.txId]];
    linked.filter(([, id]) => id).forEach(([what, id]) => {
      const li = document.createElement('li');
      li.appendChild(text(document.createElement('span'), what + ': '));
      li.appendChild(txLink(id));
      links.appendChild(li);
    });
    $('#detail-links-box').hidden = links.children.length === 0;
    const attempts = $('#detail-attempts');
    attempts.replaceChildren();
    (d.summary.errors || []).forEach(e => {
      const li = document.createElement('li');
      li.className = 'attempt';
      text(li, 'step ' + e.step + ' (' + e.stepType + ') attempt ' + e.attempt + ' at ' + new Date(e.at).toISOString() +
        (e.node ? ' on ' + e.node : '') + ': ' + e.code + (e.message && e.message !== e.code ? ' - ' + e.message : ''));
      attempts.appendChild(li);
    });
    $('#detail-attempts-box').hidden = attempts.children.length === 0;
    const w = d.summary.webhook;
    text($('#detail-webhook'), w ? 'webhook: ' + w.status + (w.attempts != null ? ' after ' + w.attempts + ' attempt(s)' : '') +
      (w.lastError ? ', last error ' + w.lastError : '') : '');
    text($('#detail-summary'), JSON.stringify(d.summary, null, 2));
    text($('#detail-input'), JSON.stringify(d.input, null, 2));
    text($('#detail-data'), JSON.stringify(d.data, null, 2));
    const times = 'created ' + d.summary.created + '\nupdated ' + d.summary.updated +
      (d.summary.completed ? '\ncompleted ' + d.summary.completed : '') + '\nattempt ' + d.summary.attempt +
      (d.node ? ' on ' + d.node : '');
    text($('#detail-log'), times + '\n\n' + d.events.map(e => JSON.stringify(e)).join('\n'));
  }

  async function act(method, suffix, body) {
    if (!selected) { return; }
    try {
      const s = await api(method, '/api/v1/admin/transactions/' + selected + suffix, body);
      text($('#action-result'), 'now ' + s.status + ' / ' + s.processingState);
    } catch (e) {
      text($('#action-result'), e.message);
    }
    await openDetail(selected);
    refresh();
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

  async function refresh() {
    if (!key()) { return; }
    try {
      const [cluster, stats, pipelines, schedules] = await Promise.all([api('GET', '/api/v1/cluster'),
        api('GET', '/api/v1/stats?series=5s'), api('GET', '/api/v1/pipelines'), api('GET', '/api/v1/admin/schedules')]);
      renderCluster(cluster);
      renderPipelines(pipelines);
      renderSchedules(schedules);
      renderChart(stats);
      renderArchive(await api('GET', '/api/v1/admin/archive'));
      renderEvents(await api('GET', eventsQuery()));
      for (const name of ['inplay', 'sleeping', 'exceptions', 'recent']) {
        renderList(name, await api('GET', '/api/v1/admin/transactions?limit=20&list=' + name));
      }
      $('#error').hidden = true;
      text($('#updated'), 'updated ' + new Date().toLocaleTimeString());
    } catch (e) {
      if (e.message !== 'unauthorized') { text($('#error'), e.message); $('#error').hidden = false; }
    }
  }

  function start() {
    $('#key-form').hidden = true;
    $('#main').hidden = false;
    $('#btn-forget').hidden = false;
    refresh();
    if (searchFromAddress()) { runSearch(false); }
  }

  $('#key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    localStorage.setItem(KEY, $('#key').value);
    $('#key').value = '';
    start();
  });
  $('#btn-forget').addEventListener('click', () => { localStorage.removeItem(KEY); showKeyForm(); });
  $('#btn-cancel').addEventListener('click', () => act('POST', '/cancel'));
  $('#btn-wake').addEventListener('click', () => act('POST', '/wake'));
  $('#btn-retry').addEventListener('click', () => act('POST', '/retry'));
  $('#btn-retry-start').addEventListener('click', () => act('POST', '/retry?from=start'));
  $('#btn-switch').addEventListener('click', () => {
    let value;
    try { value = JSON.parse($('#switch-value').value); } catch (e) { value = $('#switch-value').value; }
    act('PUT', '/switches/' + encodeURIComponent($('#switch-name').value), { value });
  });
  $('#search-form').addEventListener('submit', (e) => { e.preventDefault(); runSearch(false); });
  $('#btn-more').addEventListener('click', () => runSearch(true));
  $('#btn-bulk-retry').addEventListener('click', () => bulk('retry'));
  $('#btn-bulk-cancel').addEventListener('click', () => bulk('cancel'));
  $('#s-all').addEventListener('change', () => {
    document.querySelectorAll('#results input.pick').forEach(c => { c.checked = $('#s-all').checked; });
    updateBulk();
  });
  $('#events-kind').addEventListener('change', () => refresh());
  $('#events-subject').addEventListener('change', () => refresh());
  if (key()) { start(); } else { showKeyForm(); }
  setInterval(refresh, 2000);
})();
