// The walks of dashboard.mjs: search, detail, timeline, tree, actions; the overview's controls; screen sizes.

/** Clicks the action button, checks the dialog says what it will do, and confirms. */
export async function confirmAction(page, button, says) {
  await page.click(button);
  await page.waitForSelector('#confirm[open]');
  const text = await page.textContent('#confirm-text');
  if (!text.includes(says)) { throw new Error('the confirmation for ' + button + ' says: ' + text); }
  await page.click('#confirm-yes');
  return text;
}

async function offered(page) {
  return page.$$eval('#detail-actions button', bs => bs.map(b => b.id));
}

export async function openByHash(page, txId) {
  await page.evaluate(id => { location.hash = '#/tx/' + id; }, txId);
  await page.waitForFunction(id => document.querySelector('#detail').dataset.tx === id &&
    document.querySelectorAll('#timeline .tl-row').length > 0, txId);
}

/** The detail is on screen without scrolling: at the top of the page, its heading and timeline in the viewport. */
async function visibleAtOnce(page) {
  const seen = await page.evaluate(() => {
    const inView = sel => { const r = document.querySelector(sel).getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; };
    return { scrollY, title: inView('#detail-title'), timeline: inView('#timeline'), overview: !document.querySelector('#view-overview').hidden };
  });
  if (seen.scrollY !== 0 || !seen.title || !seen.timeline || seen.overview) {
    throw new Error('the detail is not visible at once: ' + JSON.stringify(seen));
  }
}

export async function apiDetail(page, seed, txId) {
  return page.evaluate(async ([k, id]) => (await fetch('/api/v1/admin/transactions/' + id,
    { headers: { Authorization: 'Bearer ' + k } })).json(), [seed.key, txId]);
}

/** Waits for the timeline's earlier-runs row to hold one mark that says ends; answers the marks' titles. */
async function earlierRuns(page, ends) {
  await page.waitForFunction(() => document.querySelectorAll('#timeline .tl-runs .tl-mark').length > 0);
  const marks = await page.$$eval('#timeline .tl-runs .tl-mark', ms => ms.map(m => m.title));
  if (marks.length !== 1 || !marks[0].startsWith('run 1 ' + ends)) {
    throw new Error('the earlier runs row shows ' + JSON.stringify(marks) + ', not run 1 ' + ends);
  }
  return marks.join('; ');
}

export async function walkDetail(page, seed) {
  await page.screenshot({ path: seed.out + '/overview.png' });
  // search for failed: the first page holds them, though the 2,000 live ones are newer (a walk newest first that
  // filtered after would answer an empty first page)
  await page.fill('#s-status', 'failed');
  await page.click('#btn-search');
  await page.waitForFunction(() => document.querySelectorAll('#results tr.result-row').length > 0);
  const rows = await page.$$eval('#results tr.result-row', rs => rs.map(r => r.dataset.tx));
  for (const id of [seed.fan, ...seed.fragile]) {
    if (!rows.includes(id)) { throw new Error(id + ' is not on the first page of failed: ' + rows.join(',')); }
  }
  console.log('first page of failed: ' + rows.length + ' rows');
  await page.screenshot({ path: seed.out + '/search.png' });

  // open the parent by keyboard: the detail is in place, at its own address, visible without scrolling
  await page.focus(`#results a[data-tx="${seed.fan}"]`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(id => document.querySelector('#detail').dataset.tx === id, seed.fan);
  await visibleAtOnce(page);
  if (!(await page.evaluate(() => location.hash)).startsWith('#/tx/' + seed.fan)) { throw new Error('no address of its own'); }
  const onFailed = await offered(page);
  if (onFailed.some(b => ['btn-cancel', 'btn-wake', 'btn-switch'].includes(b)) || !onFailed.includes('btn-retry')) {
    throw new Error('actions offered on a failed transaction: ' + onFailed.join(','));
  }
  console.log('detail in place: ' + await page.textContent('#detail-status') + '; offered ' + onFailed.join(','));
  await page.waitForFunction(() => [...document.querySelectorAll('#tree .tree-info')].filter(i => i.textContent.trim()).length >= 2);
  await page.screenshot({ path: seed.out + '/tree.png' });

  // open a child from the tree: the branch that failed
  const branch = await page.$$eval('#tree li.tree-node[data-tx]', (ls) => ls
    .filter(l => l.querySelector('.tree-info').textContent.includes('fragile')).map(l => l.dataset.tx)[0]);
  await page.click(`#tree a[data-tx="${branch}"]`);
  await page.waitForFunction(id => document.querySelector('#detail').dataset.tx === id
    && document.querySelector('#tree a[data-tx]'), branch);
  const parentShown = await page.$$eval('#tree li.tree-node', (ls, fan) => ls.some(l => l.dataset.tx === fan
    && l.textContent.startsWith('parent')), seed.fan);
  if (!parentShown) { throw new Error('the branch does not show its parent'); }
  console.log('child opened from the tree: ' + branch);

  // back to the search, then a failed transaction of its own: its timeline shows every attempt with its time
  await page.click('#detail-back');
  await page.waitForSelector(`#results a[data-tx="${seed.fragile[0]}"]`);
  await page.click(`#results a[data-tx="${seed.fragile[0]}"]`);
  await page.waitForFunction(id => document.querySelector('#detail').dataset.tx === id
    && document.querySelectorAll('#attempts tr.attempt-row').length > 0, seed.fragile[0]);
  await visibleAtOnce(page);
  const api = await apiDetail(page, seed, seed.fragile[0]);
  const shown = await page.$$eval('#attempts tr.attempt-row', rs => rs.map(r => ({ started: r.dataset.started,
    time: r.querySelector('.attempt-time').textContent, text: r.textContent })));
  const bars = await page.locator('#timeline .attempt-bar').count();
  if (api.attempts.length !== 4 || shown.length !== 4 || bars !== 4
    || shown.some((r, i) => r.started !== api.attempts[i].started || !r.time.includes(api.attempts[i].started.slice(11, 19)))) {
    throw new Error('timeline: ' + bars + ' bars, rows ' + JSON.stringify(shown) + ' for ' + JSON.stringify(api.attempts));
  }
  if (!shown[3].text.includes('node-') || !shown[3].text.includes('the service is broken')) {
    throw new Error('the failed attempt shows no node or error: ' + shown[3].text);
  }
  console.log('timeline: ' + bars + ' attempts, ' + shown.map(r => r.time).join(', '));
  await page.screenshot({ path: seed.out + '/detail.png' });

  // retry from the failed step (asked first); the completion is pushed and the page goes green, no reload
  await page.evaluate(() => { window.notReloaded = true; });
  const said = await confirmAction(page, '#btn-retry', 'step 2');
  await page.waitForFunction(() => document.querySelector('#detail').dataset.status === 'success'
    && Number(document.querySelector('#detail').dataset.pushed) > 0, null, { timeout: 30000 });
  if (!(await page.evaluate(() => window.notReloaded === true))) { throw new Error('the page was reloaded'); }
  console.log('retried (' + said + '): ' + await page.textContent('#detail-status') + ', pushed');
  // the run that failed is kept: the timeline has a row for the earlier runs, a mark for each
  console.log('earlier runs: ' + await earlierRuns(page, 'ended failed at step 2'));
  await page.screenshot({ path: seed.out + '/retried.png' });

  // a sleeping one: cancel and wake and set switch are offered, retry is not; cancelled, then run again
  await openByHash(page, seed.sleeping);
  const onSleeping = await offered(page);
  if (!['btn-cancel', 'btn-wake', 'btn-switch'].every(b => onSleeping.includes(b)) || onSleeping.includes('btn-retry')) {
    throw new Error('actions offered on a sleeping transaction: ' + onSleeping.join(','));
  }
  // paused, it offers resume instead of pause; resumed, pause again
  if (!onSleeping.includes('btn-pause') || onSleeping.includes('btn-resume')) {
    throw new Error('pause not offered on a sleeping transaction: ' + onSleeping.join(','));
  }
  await confirmAction(page, '#btn-pause', 'Hold it where it stands');
  await page.waitForFunction(() => document.querySelector('#detail-status').textContent.includes('paused since')
    && document.querySelector('#btn-resume') !== null);
  console.log('after pause: ' + await page.textContent('#detail-status'));
  await confirmAction(page, '#btn-resume', 'where it stood');
  await page.waitForFunction(() => !document.querySelector('#detail-status').textContent.includes('paused')
    && document.querySelector('#btn-pause') !== null);
  await confirmAction(page, '#btn-cancel', 'cancelled');
  await page.waitForFunction(() => document.querySelector('#detail').dataset.status === 'cancelled');
  console.log('after cancel: ' + await page.textContent('#detail-status'));
  await confirmAction(page, '#btn-retry-start', 'step 1');
  await page.waitForFunction(() => document.querySelector('#detail').dataset.status === 'running');
  console.log('after retry from step 1: ' + await page.textContent('#detail-status'));
  console.log('earlier runs after the cancel: ' + await earlierRuns(page, 'ended cancelled at step 1'));
}

export async function walkOverview(page, seed) {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector('#view-overview:not([hidden])');
  const master = '#queues tr.group-row[data-group="master"]';
  // a redraw keeps what reads the same: the buttons of a group, a pipeline and a schedule survive two polls' draws
  // (rebuilt, one could be swapped between a click's press and release, and the click lost)
  const buttons = [master + ' button.group-pause', '#pipelines tr.pipeline-row[data-pipeline="order"] button.pipeline-toggle',
    '#schedules tr.schedule-row[data-schedule="nightly"] button.schedule-pause'];
  const kept = [];
  for (const sel of buttons) { kept.push(await page.waitForSelector(sel)); }
  const drawnBefore = await page.evaluate(() => Number(document.querySelector('#queues').dataset.drawn || 0));
  await page.waitForFunction(n => Number(document.querySelector('#queues').dataset.drawn || 0) >= n + 2, drawnBefore);
  for (let i = 0; i < kept.length; i++) {
    if (!(await kept[i].evaluate(b => b.isConnected))) { throw new Error('a redraw rebuilt ' + buttons[i]); }
  }
  console.log('a redraw keeps the buttons: ' + kept.length + ' of ' + buttons.length);
  // a poll that read the cluster before the pause and answers after it must not paint 'running' over 'paused':
  // its answer is held until the pause is drawn, then let go, and the page drops it (latest wins)
  let release;
  const released = new Promise(r => { release = r; });
  let heldRead;
  let heldFailed;
  const read = new Promise((r, f) => { heldRead = r; heldFailed = f; });
  let answered;
  let unanswered;
  const fulfilled = new Promise((r, f) => { answered = r; unanswered = f; });
  let holding = true;
  await page.route('**/api/v1/cluster', async route => {
    if (!holding) { return route.continue(); }
    holding = false;
    try {
      const answer = await route.fetch();
      heldRead(answer);
      await released;
      await route.fulfill({ response: answer });
      answered();
    } catch (e) {
      heldFailed(e);
      unanswered(e);
    }
  });
  let timer;
  const stale = await Promise.race([read, new Promise((r, f) => {
    timer = setTimeout(() => f(new Error('no cluster read to hold in 20 s')), 20000);
  })]).finally(() => clearTimeout(timer));
  const staleState = (await stale.json()).queues.master.state;
  if (staleState !== 'running') { throw new Error('the held read says ' + staleState); }
  await page.click(master + ' button.group-pause');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.group-state').textContent === 'paused', master);
  console.log('after pause: ' + await page.textContent('#group-result'));
  // counted from here, and once the held answer is in: the drop it causes (a poll from before the pause still out
  // would only add one more, and is dropped for the same reason)
  const droppedBefore = await page.evaluate(() => Number(document.querySelector('#queues').dataset.dropped || 0));
  release();
  await fulfilled;
  await page.waitForFunction(before => Number(document.querySelector('#queues').dataset.dropped || 0) > before,
    droppedBefore);
  await page.unroute('**/api/v1/cluster');
  const shown = await page.textContent(master + ' td.group-state');
  if (shown !== 'paused') { throw new Error('a read from before the pause was drawn over it: ' + shown); }
  console.log('a read from before the pause dropped: still paused');
  await page.click(master + ' button.group-resume');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.group-state').textContent === 'running', master);
  const order = '#pipelines tr.pipeline-row[data-pipeline="order"]';
  await page.click(order + ' button.pipeline-toggle');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.pipeline-state').textContent === 'disabled', order);
  await page.click(order + ' button.pipeline-toggle');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.pipeline-state').textContent === 'enabled', order);
  console.log('group paused and resumed, pipeline disabled and enabled from the page');

  // work held back by a rate limit longer than reaper.stuckHeldAfter is listed as stuck, with a link to it
  const stuck = '#stuck-list tr.stuck-row[data-tx="' + seed.held + '"]';
  await page.waitForSelector(stuck, { timeout: 30000 });
  const reason = await page.textContent(stuck + ' td:nth-child(2)');
  if (reason !== 'held') { throw new Error('listed stuck as ' + reason + ', not held'); }
  console.log('stuck listed: ' + await page.textContent('#stuck-counts'));
  // its step counted from 1 as everywhere else on the page (held before its first run: step 1, attempt 0)
  const details = await page.textContent(stuck + ' td.stuck-details');
  if (!details.startsWith('step 1 · attempt 0') || details.includes('"step"')) {
    throw new Error('the stuck details say ' + details);
  }
  console.log('stuck details: ' + details);

  // the last hour of each group from the minute series: this test's completions are in it
  const hour = '#hour tr.hour-row[data-group="master"]';
  await page.waitForFunction(sel => Number((document.querySelector(sel + ' td.hour-completed') || {}).textContent) > 0, hour);
  // and its step latency over the hour: p50 and p99 in ms (a bucket's bound), or '-' when no step ran
  const p50 = await page.textContent(hour + ' td.hour-p50');
  const p99 = await page.textContent(hour + ' td.hour-p99');
  if (![p50, p99].every(v => /^(\d+|> \d+|-)$/.test(v))) { throw new Error('last hour latency not shown: ' + p50 + ' / ' + p99); }
  if (/^\d+$/.test(p50) && /^\d+$/.test(p99) && Number(p50) > Number(p99)) { throw new Error('p50 ' + p50 + ' above p99 ' + p99); }
  console.log('last hour: master completed ' + await page.textContent(hour + ' td.hour-completed') + ', charts '
    + await page.locator(hour + ' svg.spark').count() + ', p50 ' + p50 + ' ms, p99 ' + p99 + ' ms');

  const nightly = '#schedules tr.schedule-row[data-schedule="nightly"]';
  await page.waitForSelector(nightly);
  await page.click(nightly + ' button.schedule-pause');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.schedule-state').textContent.startsWith('paused'), nightly);
  await page.click(nightly + ' button.schedule-trigger');
  await page.waitForSelector(nightly + ' a.tx-link');
  console.log('schedule paused and triggered from the page: ' + await page.textContent(nightly));

  // the failed ones of one pipeline: two selected and retried together (asked first); the list shows the result
  await page.fill('#s-status', 'failed');
  await page.fill('#s-pipeline', 'fragile');
  await page.click('#btn-search');
  await page.waitForFunction(() => document.querySelectorAll('#results tr.result-row').length === 4);
  if (!(await page.evaluate(() => location.hash)).includes('status=failed')) { throw new Error('the address does not keep the search'); }
  const two = seed.fragile.slice(1, 3);
  for (const id of two) { await page.check(`#results input.pick[data-tx="${id}"]`); }
  await confirmAction(page, '#btn-bulk-retry', 'Run the 2 selected');
  await page.waitForFunction(() => (document.querySelector('#search-result').textContent || '').startsWith('retry: 2 of 2 done'));
  await page.waitForFunction(() => document.querySelectorAll('#results tr.result-row').length === 2);
  console.log('retried from a search: ' + two.join(','));
  // each retry is an admin act: the audit view lists it (refreshed with the events, an admin event announces it)
  await page.waitForFunction(() => [...document.querySelectorAll('#audit tr.audit-row')]
    .some(r => r.textContent.includes('POST /api/v1/admin/transactions/:txId/retry')), null, { timeout: 10000 });
  console.log('the retries are in the audit view');

  // a node death shows in the events list once Redis judges it, pushed over the bridge (the time it took is printed,
  // not asserted: a loaded machine may take longer than a quiet one)
  const death = '#events tr.event-row[data-kind="node-dead"]';
  console.log('ready for a node death');
  const t0 = Date.now();
  await page.waitForFunction(([sel, id]) => [...document.querySelectorAll(sel)].some(r => r.textContent.includes(id)),
    [death, seed.deadNode]);
  console.log('node death shown after ' + (Date.now() - t0) + ' ms');
  await page.selectOption('#events-kind', 'schedule-paused');
  await page.waitForFunction(() => document.querySelectorAll('#events tr.event-row[data-kind="node-dead"]').length === 0);
  console.log('events filtered by kind');
  await page.selectOption('#events-kind', '');
}

/** A pipeline drawn: the parallel step's branches beside it, each a link to its own drawing. */
export async function walkPipeline(page, seed) {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.click('#pipelines tr[data-pipeline="fan"] a.pipe-link');
  await page.waitForFunction(() => document.querySelector('#pipeline-view').dataset.drawn === 'fan');
  const fan = await page.$$eval('#pipeline-graph .graph-step', ls => ls.map(l => l.textContent));
  const branches = await page.$$eval('#pipeline-graph .graph-step a.pipe-link', as => as.map(a => a.dataset.pipeline));
  if (fan.length !== 1 || branches.join(',') !== 'order,fragile') {
    throw new Error('fan drawn as ' + JSON.stringify(fan) + ' with ' + branches.join(','));
  }
  await page.screenshot({ path: seed.out + '/pipeline.png' });
  await page.click('#pipeline-graph a.pipe-link[data-pipeline="fragile"]');
  await page.waitForFunction(() => document.querySelector('#pipeline-view').dataset.drawn === 'fragile');
  const steps = await page.$$eval('#pipeline-graph .graph-step', ls => ls.map(l => l.textContent));
  if (steps.length !== 2 || !steps[1].includes('2 · test/broken') || !steps[1].includes('up to 3 attempts')) {
    throw new Error('fragile drawn as ' + JSON.stringify(steps));
  }
  console.log('pipelines drawn: fan → ' + branches.join(', ') + '; fragile: ' + steps.join(' | ') + '; ' +
    await page.textContent('#pipeline-stats'));
}

export async function noSidewaysScroll(page, what) {
  const w = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  if (w.scroll > w.client) {
    // the outermost elements that reach past the viewport (where the overflow starts)
    const wide = await page.evaluate(() => {
      const past = e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1;
      return [...document.querySelectorAll('body *')].filter(e => past(e) && !past(e.parentElement)).slice(0, 8)
        .map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
    });
    throw new Error(what + ' scrolls sideways: ' + JSON.stringify(w) + ', widest: ' + wide.join('; '));
  }
  return w;
}

export async function walkSizes(page, seed) {
  for (const width of [390, 1920]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 1080 });
    await page.evaluate(() => { location.hash = '#/'; });
    await page.waitForSelector('#view-overview:not([hidden])');
    await page.waitForSelector('#list-recent tbody tr');
    await noSidewaysScroll(page, 'the overview at ' + width + ' px');
    if (width === 390) { await page.screenshot({ path: seed.out + '/phone-overview.png' }); }
    await openByHash(page, seed.fan);
    await visibleAtOnce(page);
    const w = await noSidewaysScroll(page, 'the detail at ' + width + ' px');
    if (width === 390) { await page.screenshot({ path: seed.out + '/phone-detail.png' }); }
    await page.evaluate(() => { location.hash = '#/pipeline/fan'; });
    await page.waitForFunction(() => document.querySelector('#pipeline-view').dataset.drawn === 'fan'
      && !document.querySelector('#pipeline-view').hidden);
    await noSidewaysScroll(page, 'a pipeline drawn at ' + width + ' px');
    console.log('no sideways scroll at ' + width + ' px: ' + JSON.stringify(w));
  }
}
