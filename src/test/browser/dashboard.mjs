// Drives the dashboard in Debian's Chromium: node dashboard.mjs '<JSON: base, key, sleeping, out, deadNode, fan,
// fragile: [txId…], approval, orderId, charged, wakeable, gated, archived, …>'. Exits 0 when every check passed; prints what it saw. Screenshots (the viewport) go to out.
import { chromium } from 'playwright-core';
import { walkDetail, walkOverview, walkPipeline, walkSizes, noSidewaysScroll } from './dashboard-walks.mjs';
import { walkAwait, walkVersions, walkRollout, walkOverviewA11y, walkPartitions } from './dashboard-more.mjs';
import { walkRecentArchived, walkCompensation, walkWakeAndSwitch, walkMore, walkSlowDetail } from './dashboard-life.mjs';

const seed = JSON.parse(process.argv[2]);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
    '--no-first-run', '--disable-component-update', '--disable-sync']
});
const foreign = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(20000);
  page.on('request', r => { if (!r.url().startsWith(seed.base) && !r.url().startsWith(seed.base.replace('http', 'ws'))) { foreign.push(r.url()); } });
  page.on('pageerror', e => console.log('page error: ' + e.message));
  page.on('console', m => { if (m.type() !== 'log') { console.log('page ' + m.type() + ': ' + m.text()); } });
  page.on('dialog', d => { console.log('unexpected browser dialog: ' + d.message()); d.dismiss(); });
  // the page's own POSTs, with their answer and how long they took: printed when a check fails
  const posts = [];
  const t0 = Date.now();
  page.on('requestfinished', async r => {
    if (r.method() !== 'POST') { return; }
    const res = await r.response().catch(() => null);
    posts.push((Date.now() - t0) + ' ms: POST ' + new URL(r.url()).pathname + ' ' + (res ? res.status() : '?') +
      ' in ' + Math.round(r.timing().responseEnd) + ' ms');
  });
  page.on('requestfailed', r => { if (r.method() === 'POST') { posts.push('POST ' + r.url() + ' failed: ' + r.failure().errorText); } });

  await page.goto(seed.base + '/dashboard');
  await page.fill('#key', seed.key);
  await page.click('#key-form button[type=submit]');
  await page.waitForSelector('#nodes tbody tr.node-row');
  console.log('nodes shown: ' + await page.locator('#nodes tbody tr.node-row').count());
  await page.waitForSelector('#live.on');
  console.log('live: subscribed over the bridge');

  try {
    await walkPartitions(page, seed);
    // first, while the archived one is still among the newest to have ended
    await walkRecentArchived(page, seed);
    await walkDetail(page, seed);
    await walkAwait(page, seed, noSidewaysScroll);
    await walkCompensation(page, seed);
    await walkWakeAndSwitch(page, seed);
    await walkOverview(page, seed);
    await walkOverviewA11y(page);
    await walkPipeline(page, seed);
    await walkVersions(page, seed, noSidewaysScroll);
    await walkRollout(page, seed);
    await walkSizes(page, seed);
    await walkMore(page);
    await walkSlowDetail(page, seed);
  } catch (e) {
    // what the page showed when a check failed
    console.log('failed with the page at ' + await page.evaluate(() => location.hash) + ': ' + JSON.stringify(
      await page.evaluate(() => ({ detail: Object.assign({}, document.querySelector('#detail').dataset),
        status: document.querySelector('#detail-status').textContent, live: document.querySelector('#live').textContent,
        action: document.querySelector('#action-result').textContent,
        group: document.querySelector('#group-result').textContent, error: document.querySelector('#error').hidden
          ? '' : document.querySelector('#error').textContent, updated: document.querySelector('#updated').textContent,
        polls: Object.assign({}, document.querySelector('#queues').dataset) }))));
    console.log('the last POSTs, at ms since the page opened: ' + JSON.stringify(posts.slice(-8)));
    await page.screenshot({ path: seed.out + '/failure.png' });
    throw e;
  }

  // the key is kept: a reload opens the dashboard without asking again
  await page.setViewportSize({ width: 1400, height: 1000 });
  await page.evaluate(() => { location.hash = '#/'; });
  await page.reload();
  await page.waitForSelector('#nodes tbody tr.node-row');
  if (!(await page.isHidden('#key-form'))) { throw new Error('the key was not kept'); }
  if (foreign.length > 0) { throw new Error('requests outside the node: ' + foreign.join(', ')); }
  console.log('dashboard: all checks passed');
} finally {
  await browser.close();
}
