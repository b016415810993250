// The walks of dashboard.mjs for the rest of a transaction's life: an archived one in Recent, a compensation's row
// in the timeline, waking a sleeper and setting the switch another waits for (each asked first, its effect read
// back from the API), and the input and output folded until opened.
import { confirmAction, openByHash, apiDetail } from './dashboard-walks.mjs';

/** Recent reads the archive too: a transaction the archive took (Redis no longer holds it) is listed. */
export async function walkRecentArchived(page, seed) {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector('#view-overview:not([hidden])');
  const row = `#list-recent a[data-tx="${seed.archived}"]`;
  await page.waitForSelector(row);
  const api = await apiDetail(page, seed, seed.archived);
  if (api.archived !== true) { throw new Error(seed.archived + ' is not archived: ' + JSON.stringify(api)); }
  const status = await page.$eval(row, a => a.closest('tr').lastChild.textContent);
  console.log('recent lists the archived ' + seed.archived + ' (' + status + ', read from the archive)');
}

/** A failed transaction with onFailure: its timeline has a compensation row, linked, with the outcome. */
export async function walkCompensation(page, seed) {
  await openByHash(page, seed.charged);
  const c = (await apiDetail(page, seed, seed.charged)).summary.compensation;
  await page.waitForSelector('#timeline .tl-compensation');
  const shown = await page.$eval('#timeline .tl-compensation', r => ({
    link: (r.querySelector('a[data-tx]') || {}).dataset?.tx, label: r.querySelector('.tl-label').textContent,
    note: (r.querySelector('.tl-note') || {}).textContent, mark: (r.querySelector('.tl-mark') || {}).className }));
  if (!c || shown.link !== c.txId || shown.note !== 'success' || !shown.mark.includes('status-success')
    || !shown.label.includes('refund')) {
    throw new Error('the compensation row shows ' + JSON.stringify(shown) + ' for ' + JSON.stringify(c));
  }
  console.log('compensation row: ' + shown.label.replace('compensation ', '') + ' ' + shown.note + ' (' + c.txId + ')');
}

/** Whether the <details> holding the given <pre> is open. */
async function unfolded(page, pre) {
  return page.$eval(pre, p => p.closest('details').open);
}

/**
 * A sleeper woken from the page (it runs its last step and ends success); the switch another waits for set from
 * the page (it goes on with the switch's value); the input and output start folded and open on a click.
 */
export async function walkWakeAndSwitch(page, seed) {
  await openByHash(page, seed.wakeable);
  await page.waitForSelector('#btn-wake');
  await confirmAction(page, '#btn-wake', 'Wake it now');
  await page.waitForFunction(() => document.querySelector('#detail').dataset.status === 'success', null,
    { timeout: 30000 });
  const woken = await apiDetail(page, seed, seed.wakeable);
  if (woken.summary.status !== 'success') { throw new Error('woken, the API says ' + woken.summary.status); }
  console.log('woken from the page: ' + woken.summary.status + ' (' + await page.textContent('#action-result') + ')');

  await openByHash(page, seed.gated);
  await page.waitForSelector('#btn-switch');
  await page.fill('#switch-name', 'go');
  await page.fill('#switch-value', 'true');
  await confirmAction(page, '#btn-switch', 'Set switch "go" to true');
  await page.waitForFunction(() => document.querySelector('#detail').dataset.status === 'success', null,
    { timeout: 30000 });
  const gated = await apiDetail(page, seed, seed.gated);
  const go = (gated.switches.go || {}).value; // a switch is {value, seq}
  if (go !== true || gated.summary.output.go !== true) {
    throw new Error('after the switch, the API says ' + JSON.stringify({ switches: gated.switches, output: gated.summary.output }));
  }
  console.log('switch set from the page: go = ' + go + ', now ' + gated.summary.status
    + ' with output ' + JSON.stringify(gated.summary.output));

  // folded until asked: neither the input nor the output is open on its own; a click on its summary opens it
  const closed = { input: await unfolded(page, '#detail-input'), output: await unfolded(page, '#detail-output') };
  if (closed.input || closed.output) { throw new Error('folded JSON open at first: ' + JSON.stringify(closed)); }
  for (const [pre, has] of [['#detail-input', '"gate": 1'], ['#detail-output', '"go": true']]) {
    const summary = page.locator(pre).locator('xpath=..').locator('summary');
    await summary.click();
    await page.waitForFunction(sel => document.querySelector(sel).closest('details').open, pre);
    if (!(await page.isVisible(pre)) || !(await page.textContent(pre)).includes(has)) {
      throw new Error(pre + ' opened shows ' + await page.textContent(pre));
    }
    await summary.click();
    await page.waitForFunction(sel => !document.querySelector(sel).closest('details').open, pre);
  }
  console.log('folded JSON: input and output closed when the detail opens, each opened by its summary');
}

/** More, clicked twice at once, asks for the next page once: each transaction is listed once. */
export async function walkMore(page) {
  await page.evaluate(() => { location.hash = '#/'; });
  await page.waitForSelector('#view-overview:not([hidden])');
  for (const f of ['status', 'owner', 'externalId', 'from', 'to', 'q']) { await page.fill('#s-' + f, ''); }
  await page.fill('#s-pipeline', 'later');
  await page.click('#btn-search');
  // a page may be short when the search's time budget ends first: what counts is what More adds
  await page.waitForFunction(() => document.querySelector('#results').dataset.reading === '0' &&
    document.querySelectorAll('#results tr.result-row').length > 0 && !document.querySelector('#btn-more').hidden);
  const first = await page.locator('#results tr.result-row').count();
  let pages = 0;
  const counted = r => { if (r.url().includes('/api/v1/admin/transactions?') && r.url().includes('cursor=')) { pages++; } };
  page.on('request', counted);
  await page.dblclick('#btn-more');
  await page.waitForFunction(n => document.querySelector('#results').dataset.reading === '0' &&
    document.querySelectorAll('#results tr.result-row').length > n, first);
  page.off('request', counted);
  const ids = await page.$$eval('#results tr.result-row', rs => rs.map(r => r.dataset.tx));
  if (pages !== 1 || new Set(ids).size !== ids.length) {
    throw new Error('More clicked twice asked for ' + pages + ' page(s) and listed ' + ids.length + ' rows, ' +
      new Set(ids).size + ' of them distinct');
  }
  console.log('More clicked twice: one page asked for, ' + ids.length + ' rows, each once');
}

/**
 * With the bridge down the detail is read every 3 s; each read here answers only once the next has started (slower
 * than the poll), and each answer still draws, in order (latest wins; a rule of "the last started only" drew none).
 * Last of the walks: the bridge stays mocked down for the rest of the page's life.
 */
export async function walkSlowDetail(page, seed) {
  await page.routeWebSocket(/\/eventbus\//, ws => {
    ws.onMessage(() => ws.send(JSON.stringify({ type: 'err', message: 'down for the test' })));
  });
  await page.evaluate(id => { location.hash = '#/tx/' + id; }, seed.charged);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#live').classList.contains('off'));
  await page.waitForFunction(id => document.querySelector('#detail').dataset.tx === id, seed.charged);
  let held = null;
  let released = 0;
  let stop = false;
  let first;
  const firstRead = new Promise(r => { first = r; });
  const path = new RegExp('/api/v1/admin/transactions/' + seed.charged + '$');
  await page.route(path, async route => {
    if (stop) { return route.continue(); }
    const before = held;
    held = route;
    first();
    if (before) {
      released++;
      await before.fulfill({ response: await before.fetch() });
    }
  });
  let timer;
  await Promise.race([firstRead, new Promise((r, f) => {
    timer = setTimeout(() => f(new Error('no detail read with the bridge down in 20 s')), 20000);
  })]).finally(() => clearTimeout(timer));
  await page.evaluate(() => { document.querySelector('#detail').dataset.source = 'test'; });
  await page.waitForFunction(() => document.querySelector('#detail').dataset.source === 'poll');
  stop = true;
  await held.continue().catch(() => {}); // the one still held (answered already if the next one took it)
  await page.unroute(path);
  console.log('slow detail reads drawn with the bridge down: ' + released + ' answered after the next began');
}
