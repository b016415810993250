// Drives the dashboard in Debian's Chromium: node dashboard.mjs <node URL> <admin key> <sleeping txId> <screenshot dir>
// Exits 0 when every check passed; prints what it saw.
import { chromium } from 'playwright-core';

const [base, key, sleeping, out, deadNode] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
    '--no-first-run', '--disable-component-update', '--disable-sync']
});
const foreign = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(20000);
  page.on('request', r => { if (!r.url().startsWith(base)) { foreign.push(r.url()); } });
  page.on('pageerror', e => console.log('page error: ' + e.message));

  await page.goto(base + '/dashboard');
  await page.fill('#key', key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#nodes tbody tr.node-row');
  const nodes = await page.locator('#nodes tbody tr.node-row').count();
  console.log('nodes shown: ' + nodes);

  // the chart has a point above the baseline once completions are counted
  await page.waitForFunction(() => (document.querySelector('#throughput').getAttribute('points') || '')
    .split(' ').some(p => p && Number(p.split(',')[1]) < 150));
  console.log('chart: ' + await page.textContent('#chart-caption'));
  await page.screenshot({ path: out + '/dashboard.png', fullPage: true });

  const link = `#list-sleeping a[data-tx="${sleeping}"]`;
  await page.waitForSelector(link);
  await page.click(link);
  await page.waitForFunction(tx => document.querySelector('#detail-tx').textContent === tx, sleeping);
  await page.waitForFunction(() => document.querySelectorAll('#detail-steps li').length > 0);
  console.log('detail: ' + await page.textContent('#detail-status') + '; steps: '
    + (await page.locator('#detail-steps li').allTextContents()).join(' | '));
  await page.screenshot({ path: out + '/detail.png', fullPage: true });

  await page.click('#btn-cancel');
  await page.waitForFunction(() => document.querySelector('#detail-status').textContent.startsWith('cancelled'));
  console.log('after cancel: ' + await page.textContent('#detail-status'));
  await page.screenshot({ path: out + '/cancelled.png', fullPage: true });

  // a cancelled transaction may run again: from its first step, and it is running once more
  await page.waitForSelector('#btn-retry-start:not([hidden])');
  await page.click('#btn-retry-start');
  await page.waitForFunction(() => document.querySelector('#detail-status').textContent.startsWith('running'));
  console.log('after retry: ' + await page.textContent('#detail-status'));

  // pause the group from the queues table, then resume it; disable a pipeline, then enable it
  const master = '#queues tr.group-row[data-group="master"]';
  await page.click(master + ' button.group-pause');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.group-state').textContent === 'paused', master);
  console.log('after pause: ' + await page.textContent('#group-result'));
  await page.click(master + ' button.group-resume');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.group-state').textContent === 'running', master);
  const order = '#pipelines tr.pipeline-row[data-pipeline="order"]';
  await page.click(order + ' button.pipeline-toggle');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.pipeline-state').textContent === 'disabled', order);
  await page.click(order + ' button.pipeline-toggle');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.pipeline-state').textContent === 'enabled', order);
  console.log('group paused and resumed, pipeline disabled and enabled from the page');

  // a schedule: paused from the page, then triggered (its run shows as the last run)
  const nightly = '#schedules tr.schedule-row[data-schedule="nightly"]';
  await page.waitForSelector(nightly);
  await page.click(nightly + ' button.schedule-pause');
  await page.waitForFunction(sel => document.querySelector(sel + ' td.schedule-state').textContent.startsWith('paused'),
    nightly);
  await page.click(nightly + ' button.schedule-trigger');
  await page.waitForSelector(nightly + ' a.tx-link');
  console.log('schedule paused and triggered from the page: ' + await page.textContent(nightly));

  // search the failed transactions of one pipeline, select three and retry them: the list shows the result
  // without a reload, and the address keeps the search
  await page.fill('#s-status', 'failed');
  await page.fill('#s-pipeline', 'fragile');
  await page.click('#btn-search');
  await page.waitForFunction(() => document.querySelectorAll('#results tr.result-row').length === 4);
  if (!(await page.evaluate(() => location.hash)).includes('status=failed')) {
    throw new Error('the address does not keep the search: ' + await page.evaluate(() => location.hash));
  }
  const picks = page.locator('#results tr.result-row input.pick');
  for (let i = 0; i < 3; i++) { await picks.nth(i).check(); }
  const retried = await page.$$eval('#results tr.result-row input.pick:checked', bs => bs.map(b => b.dataset.tx));
  await page.click('#btn-bulk-retry');
  await page.waitForFunction(() => (document.querySelector('#search-result').textContent || '').startsWith('retry: 3 of 3 done'));
  await page.waitForFunction(() => document.querySelectorAll('#results tr.result-row').length === 1);
  console.log('retried from a search: ' + retried.join(','));
  // the one left: its detail lists its failed attempt with the node that ran it
  await page.click('#results tr.result-row a.tx-link');
  await page.waitForSelector('#detail-attempts li.attempt');
  const attempt = await page.textContent('#detail-attempts li.attempt');
  if (!attempt.includes(' on node-') || !attempt.includes('test/broken')) { throw new Error('attempt shown as: ' + attempt); }
  console.log('failed attempt shown: ' + attempt);
  await page.screenshot({ path: out + '/search.png', fullPage: true });

  // a node death shows in the events list within 5 s of Redis judging it (the test registers a node with no
  // heartbeat once it reads the line below)
  const death = `#events tr.event-row[data-kind="node-dead"]`;
  console.log('ready for a node death');
  const t0 = Date.now();
  await page.waitForFunction(([sel, id]) => [...document.querySelectorAll(sel)].some(r => r.textContent.includes(id)),
    [death, deadNode], { timeout: 5000 });
  console.log('node death shown after ' + (Date.now() - t0) + ' ms');
  await page.selectOption('#events-kind', 'schedule-paused');
  await page.waitForFunction(() => document.querySelectorAll('#events tr.event-row[data-kind="node-dead"]').length === 0);
  console.log('events filtered by kind');

  // the key is kept: a reload opens the dashboard without asking again
  await page.reload();
  await page.waitForSelector('#nodes tbody tr.node-row');
  if (!(await page.isHidden('#key-form'))) { throw new Error('the key was not kept'); }
  if (foreign.length > 0) { throw new Error('requests outside the node: ' + foreign.join(', ')); }
  console.log('dashboard: all checks passed');
} finally {
  await browser.close();
}
