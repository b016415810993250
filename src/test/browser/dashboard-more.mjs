// The walks of dashboard.mjs for what a transaction awaits (send its event from the page) and for a pipeline's
// versions drawn side by side with per-step numbers; each view's contrast and keyboard reach checked on the way.
import { checkContrast, tabReaches } from './dashboard-a11y.mjs';

async function open(page, txId) {
  await page.evaluate(id => { location.hash = '#/tx/' + id; }, txId);
  await page.waitForFunction(id => document.querySelector('#detail').dataset.tx === id &&
    document.querySelectorAll('#timeline .tl-row').length > 0, txId);
}

/** A transaction waiting for an event: the page says which and sends it (asked first), and it goes on. */
export async function walkAwait(page, seed, noSidewaysScroll) {
  // one that waits for nothing is offered no event
  await open(page, seed.fragile[3]);
  if (!(await page.isHidden('#detail-awaiting'))) { throw new Error('a failed transaction shows an await'); }
  await checkContrast(page, 'a failed transaction\'s detail');

  await open(page, seed.approval);
  await page.waitForSelector('#detail-awaiting:not([hidden]) #btn-send-event');
  const what = await page.textContent('#awaiting-what');
  for (const part of ['"order.approved"', '"' + seed.orderId + '"', 'owner acme', 'step 1', 'until 20']) {
    if (!what.includes(part)) { throw new Error('the await says ' + what + ', not ' + part); }
  }
  await checkContrast(page, 'a detail awaiting an event');
  const presses = await tabReaches(page, '#detail-title', ['#event-payload', '#btn-send-event', '#btn-cancel']);
  console.log('await shown: ' + what + ' (send reached by Tab in ' + presses + ')');
  await page.screenshot({ path: seed.out + '/awaiting.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await noSidewaysScroll(page, 'a detail awaiting an event at 390 px');
  await page.screenshot({ path: seed.out + '/phone-awaiting.png' });
  await page.setViewportSize({ width: 1400, height: 1000 });

  // an approval by keyboard: the payload typed, the button pressed with Enter, the confirmation read and accepted
  await page.fill('#event-payload', '{"approvedBy": "ops", "ok": true}');
  await page.focus('#btn-send-event');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#confirm[open]');
  const says = await page.textContent('#confirm-text');
  if (!says.includes('order.approved') || !says.includes(seed.orderId) || !says.includes('approvedBy')) {
    throw new Error('the confirmation says ' + says);
  }
  await checkContrast(page, 'the confirmation dialog');
  await page.click('#confirm-yes');
  await page.waitForFunction(() => document.querySelector('#detail').dataset.status === 'success', null, { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('#detail-output').textContent.includes('approvedBy'));
  const result = await page.textContent('#action-result');
  if (!result.includes('delivered') || !result.includes('woke 1')) { throw new Error('the send says ' + result); }
  if (!(await page.isHidden('#detail-awaiting'))) { throw new Error('it still shows an await once it went on'); }
  console.log('event sent from the page: ' + result + '; now ' + await page.textContent('#detail-status'));
  await page.screenshot({ path: seed.out + '/awaited.png' });
}

/** A pipeline with two versions: per-step numbers under each step, the versions listed, drawn side by side. */
export async function walkVersions(page, seed, noSidewaysScroll) {
  await page.evaluate(() => { location.hash = '#/pipeline/priced'; });
  await page.waitForFunction(() => document.querySelector('#pipeline-view').dataset.drawn === 'priced');
  const numbers = await page.$$eval('#pipeline-graph .step-stats', ss => ss.map(s => s.textContent));
  if (numbers.length !== 3 || numbers.some(n => !/^last hour: 2 attempts · p50 [≤>] .* · p99 [≤>] /.test(n))) {
    throw new Error('the current version\'s steps say ' + JSON.stringify(numbers));
  }
  const rows = await page.$$eval('#versions tr.version-row', rs => rs.map(r => r.textContent));
  if (rows.length !== 2 || !rows[0].includes('current')) { throw new Error('versions listed: ' + JSON.stringify(rows)); }
  await checkContrast(page, 'a pipeline drawn');
  await tabReaches(page, '#pipeline-heading', ['#compare-a', '#compare-b', '#btn-compare']);
  await page.click('#btn-compare');
  await page.waitForFunction(() => document.querySelector('#versions-compare').dataset.compared);
  const sides = await page.$$eval('#versions-compare .compare-side', cs => cs.map(c => ({ side: c.dataset.side,
    steps: [...c.querySelectorAll('li.graph-step')].map(l => [...l.classList].filter(k => k.startsWith('diff-')).join('') || 'same'),
    numbers: [...c.querySelectorAll('.step-stats')].map(s => s.textContent) })));
  const marks = sides.map(s => s.side + ': ' + s.steps.join(','));
  if (marks.join(' | ') !== 'left: same,diff-changed | right: same,diff-changed,diff-added') {
    throw new Error('the versions compared as ' + marks.join(' | '));
  }
  if (!sides[0].numbers.every(n => n.startsWith('last hour: 3 attempts'))) {
    throw new Error('the older version\'s numbers: ' + sides[0].numbers.join('; '));
  }
  const summary = await page.textContent('#compare-summary');
  if (!summary.includes('1 added') || !summary.includes('1 changed')) { throw new Error('the comparison says ' + summary); }
  await checkContrast(page, 'two versions side by side');
  await page.locator('#versions-compare').scrollIntoViewIfNeeded();
  await page.screenshot({ path: seed.out + '/versions.png' });
  await page.setViewportSize({ width: 390, height: 844 });
  await noSidewaysScroll(page, 'two versions side by side at 390 px');
  await page.setViewportSize({ width: 1400, height: 1000 });
  console.log('versions side by side: ' + marks.join(' | ') + '; ' + summary);
}

/** A pipeline with a canary: both versions' share and figures side by side, then rolled back from the page. */
export async function walkRollout(page, seed) {
  await page.evaluate(() => { location.hash = '#/pipeline/canaried'; });
  await page.waitForFunction(() => document.querySelector('#pipeline-view').dataset.drawn === 'canaried' &&
    document.querySelector('#rollout').dataset.state === 'canary');
  const rows = await page.$$eval('#rollout-versions tr.rollout-row', rs => rs.map(r =>
    [...r.querySelectorAll('td')].map(td => td.textContent)));
  const said = rows.map(r => r[1] + ' ' + r[3] + ' started, ' + r[4].replace(/ \(.*/, '') + ' failed').join(' | ');
  if (said !== 'canary ' + seed.canaryStarts + ' started, ' + seed.canaryStarts + ' failed | stable ' +
    seed.stableStarts + ' started, 0 failed' || rows[0][2] !== '50 %') {
    throw new Error('the rollout shows ' + JSON.stringify(rows));
  }
  await checkContrast(page, 'a rollout');
  await page.locator('#rollout').scrollIntoViewIfNeeded();
  await page.screenshot({ path: seed.out + '/rollout.png' });
  await page.click('#btn-rollback');
  await page.waitForSelector('#confirm[open]');
  const says = await page.textContent('#confirm-text');
  if (!says.includes('Roll back the rollout of canaried')) { throw new Error('the confirmation says ' + says); }
  await page.click('#confirm-yes');
  await page.waitForFunction(() => document.querySelector('#rollout').dataset.state === 'rolledback');
  if (!(await page.isHidden('#rollout-actions'))) { throw new Error('promote and roll back offered after a rollback'); }
  console.log('rollout shown: ' + said + '; rolled back from the page: ' + await page.textContent('#rollout-result'));
}

/** The overview's contrast, and its controls reached by Tab. */
export async function walkOverviewA11y(page) {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector('#view-overview:not([hidden])');
  await page.waitForSelector('#list-recent tbody tr');
  await checkContrast(page, 'the overview');
  await tabReaches(page, '#main', ['#s-status', '#btn-search', '#queues button.group-pause', '#pipelines a.pipe-link']);
  console.log('overview reached by Tab');
}

/**
 * Partition badges (issue 36): with several partitions, one badge per partition showing the state the cluster view
 * gives it, with its reason and since as title; with one, the row stays hidden and empty.
 */
export async function walkPartitions(page, seed) {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector('#nodes tbody tr.node-row');
  const parts = await page.evaluate(async (key) => (await (await fetch('/api/v1/cluster',
    { headers: { Authorization: 'Bearer ' + key } })).json()).partitions || [], seed.key);
  if (parts.length < 2) {
    const shown = await page.evaluate(() => ({ hidden: document.querySelector('#partitions').hidden,
      badges: document.querySelectorAll('#partitions .partition-badge').length }));
    if (!shown.hidden || shown.badges !== 0) { throw new Error('one partition, yet partitions shown: ' + JSON.stringify(shown)); }
    console.log('one partition: no partition badges');
    return;
  }
  await page.waitForSelector('#partitions .partition-badge');
  const badges = await page.$$eval('#partitions .partition-badge', bs => bs.map(b => ({ text: b.textContent,
    title: b.title, cls: b.className })));
  if (badges.length !== parts.length) { throw new Error(parts.length + ' partitions, badges ' + JSON.stringify(badges)); }
  badges.forEach((b, i) => {
    if (b.text !== i + ' ' + parts[i].state || !b.cls.includes('partition-' + parts[i].state) || !b.title.includes('since')) {
      throw new Error('badge ' + i + ' shows ' + JSON.stringify(b) + ' for ' + JSON.stringify(parts[i]));
    }
  });
  console.log(badges.length + ' partition badges: ' + badges.map(b => b.text).join(', '));
}
