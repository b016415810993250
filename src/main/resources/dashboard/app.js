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
  function cell(row, value) { row.appendChild(text(document.createElement('td'), value)); }

  function showKeyForm(message) {
    $('#main').hidden = true;
    $('#btn-forget').hidden = true;
    $('#key-form').hidden = false;
    text($('#error'), message || '');
    $('#error').hidden = !message;
  }

  function ageSeconds(now, then) { return ((Date.parse(now) - Date.parse(then)) / 1000).toFixed(1) + ' s'; }

  function renderCluster(c) {
    const body = $('#nodes tbody');
    body.replaceChildren();
    Object.entries(c.nodes).forEach(([id, n]) => {
      const tr = document.createElement('tr');
      tr.className = 'node-row';
      cell(tr, id); cell(tr, n.group); cell(tr, (n.roles || []).join(', '));
      cell(tr, n.beat ? ageSeconds(c.now, n.beat) : '?');
      cell(tr, n.busy + ' / ' + n.workers); cell(tr, n.version);
      body.appendChild(tr);
    });
    const q = $('#queues tbody');
    q.replaceChildren();
    Object.entries(c.queues).forEach(([g, l]) => {
      const tr = document.createElement('tr');
      tr.className = 'group-row';
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
      q.appendChild(tr);
    });
    const l = c.leaders || {};
    text($('#leaders'), 'Leaders: reaper ' + (l.reaper || '—') + ', archive ' + (l.archive || '—') +
      ', webhooks ' + (l.webhooks || '—'));
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

  function renderPipelines(all) {
    const body = $('#pipelines tbody');
    body.replaceChildren();
    Object.entries(all).forEach(([name, p]) => {
      const tr = document.createElement('tr');
      tr.className = 'pipeline-row';
      tr.dataset.pipeline = name;
      cell(tr, name); cell(tr, p.nodeGroup); cell(tr, p.version); cell(tr, p.disabled ? 'disabled' : 'enabled');
      tr.lastChild.className = 'pipeline-state';
      const td = document.createElement('td');
      const b = document.createElement('button');
      b.className = 'pipeline-toggle';
      text(b, p.disabled ? 'Enable' : 'Disable');
      b.addEventListener('click', async () => {
        try {
          await api('POST', '/api/v1/pipelines/' + encodeURIComponent(name) + (p.disabled ? '/enable' : '/disable'));
        } catch (e) {
          text($('#group-result'), e.message);
        }
        refresh();
      });
      td.appendChild(b);
      tr.appendChild(td);
      body.appendChild(tr);
    });
  }

  function renderSchedules(data) {
    const body = $('#schedules tbody');
    body.replaceChildren();
    data.schedules.forEach(s => {
      const tr = document.createElement('tr');
      tr.className = 'schedule-row';
      tr.dataset.schedule = s.id;
      const d = s.definition;
      cell(tr, s.id); cell(tr, d.pipeline); cell(tr, d.cron ? d.cron + ' (' + d.timeZone + ')' : 'every ' + d.every);
      cell(tr, s.nextFires.length ? s.nextFires[0] : '—');
      const last = s.lastRun;
      const td = document.createElement('td');
      if (last) {
        const a = document.createElement('a');
        a.className = 'tx-link';
        a.dataset.tx = last.txId;
        text(a, last.txId.slice(0, 15) + '… ' + (last.status || ''));
        a.addEventListener('click', () => openDetail(last.txId));
        td.appendChild(a);
      }
      tr.appendChild(td);
      cell(tr, s.fires + ' / ' + s.misses + ' / ' + s.skipped);
      cell(tr, s.paused ? 'paused by ' + s.pausedBy + (s.pauseReason ? ': ' + s.pauseReason : '') : 'active');
      tr.lastChild.className = 'schedule-state';
      const actions = document.createElement('td');
      for (const action of [s.paused ? 'resume' : 'pause', 'trigger']) {
        const b = document.createElement('button');
        b.className = 'schedule-' + action;
        text(b, action[0].toUpperCase() + action.slice(1));
        b.addEventListener('click', async () => {
          try {
            await api('POST', '/api/v1/admin/schedules/' + encodeURIComponent(s.id) + '/' + action);
          } catch (e) {
            text($('#group-result'), e.message);
          }
          refresh();
        });
        actions.appendChild(b);
      }
      tr.appendChild(actions);
      body.appendChild(tr);
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
    const body = $('#list-' + name + ' tbody');
    body.replaceChildren();
    data.transactions.forEach(t => {
      const tr = document.createElement('tr');
      const td = document.createElement('td');
      const a = document.createElement('a');
      a.className = 'tx-link';
      a.dataset.tx = t.txId;
      text(a, t.txId.slice(0, 15) + '…');
      a.title = t.txId;
      a.addEventListener('click', () => openDetail(t.txId));
      td.appendChild(a);
      tr.appendChild(td);
      cell(tr, t.type); cell(tr, t.owner); cell(tr, t.status);
      body.appendChild(tr);
    });
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
      const a = document.createElement('a');
      a.className = 'tx-link';
      a.dataset.tx = id;
      text(a, id);
      a.addEventListener('click', () => openDetail(id));
      li.appendChild(a);
      branches.appendChild(li);
    });
    $('#detail-branches-box').hidden = !(d.branches && d.branches.length);
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

  async function refresh() {
    if (!key()) { return; }
    try {
      const [cluster, stats, pipelines, schedules] = await Promise.all([api('GET', '/api/v1/cluster'),
        api('GET', '/api/v1/stats?series=5s'), api('GET', '/api/v1/pipelines'), api('GET', '/api/v1/admin/schedules')]);
      renderCluster(cluster);
      renderPipelines(pipelines);
      renderSchedules(schedules);
      renderChart(stats);
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
  if (key()) { start(); } else { showKeyForm(); }
  setInterval(refresh, 2000);
})();
