// The SockJS event-bus bridge from a web page, in Debian's Chromium: node bridge.mjs <page URL>
// The page (bridge.html, served by the test with the client libraries) talks to the node's /eventbus.
// Prints the page's window.result as JSON and exits 0; exits 1 with what the page logged otherwise.
import { chromium } from 'playwright-core';

const [url] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
    '--no-first-run', '--disable-component-update', '--disable-sync']
});
const seen = [];
try {
  const page = await browser.newPage();
  page.on('console', m => seen.push(m.type() + ': ' + m.text()));
  page.on('pageerror', e => seen.push('page error: ' + e.message));
  page.on('websocket', ws => seen.push('websocket: ' + ws.url()));
  await page.goto(url);
  try {
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30000 });
  } catch (e) {
    const log = await page.textContent('#log').catch(() => '');
    console.log('no result within 30 s\npage log:\n' + log + '\nconsole:\n' + seen.join('\n'));
    process.exit(1);
  }
  console.log(seen.join('\n'));
  console.log('result: ' + JSON.stringify(await page.evaluate(() => window.result)));
} finally {
  await browser.close();
}
