// The site is served and its page is attnscope's. An English page loads the English strings alone
// (www/strings/zh.js only once the page is shown in Chinese); Chinese that cannot be fetched leaves
// the page in English and says so, and the language button fetches it again (the notice then goes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launch, openPage, screenshot, settled, startServer } from './helpers.mjs';
import EN from '../../www/strings/en.js';
import ZH from '../../www/strings/zh.js';

test('index.html loads and is titled attnscope', async (t) => {
  const server = await startServer();
  t.after(server.close);
  const browser = await launch();
  t.after(() => browser.close());
  // No service worker: it would answer for strings/zh.js from its copy, past the route below.
  const context = await browser.newContext({ serviceWorkers: 'block', locale: 'en-US' });

  const page = await openPage(context, server.url);
  await screenshot(page, 'smoke');

  assert.match(await page.title(), /attnscope/i);

  await settled(page);
  const strings = () => page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((p) => p.startsWith('/strings')).sort());
  assert.deepEqual(await strings(), ['/strings.js', '/strings/en.js', '/strings/zh_views.js'], 'no Chinese strings on an English page');
  const tab = page.locator('#nav .tab[data-view="attention"]');
  assert.equal(await tab.innerText(), EN['view.attention']);

  await page.route('**/strings/zh.js', (route) => route.abort());
  await page.click('#lang-switch');
  await page.locator('.banner-title', { hasText: EN['lang.unavailable'] }).waitFor();
  await settled(page);
  assert.match(await page.locator('.banner').innerText(), /strings\/zh\.js/, 'the banner names the file that could not be loaded');
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
  assert.equal(await tab.innerText(), EN['view.attention'], 'the page stays in English');
  assert.equal(await page.locator('#lang-switch').innerText(), EN['lang.switch']);
  assert.doesNotMatch(page.url(), /lang=zh/, 'the link says English, as the page does');
  await screenshot(page, 'smoke-zh-unavailable');

  await page.unroute('**/strings/zh.js');
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  assert.equal(await tab.innerText(), ZH['view.attention']);
  assert.equal(await page.locator('#lang-switch').innerText(), ZH['lang.switch']);
  assert.ok((await strings()).includes('/strings/zh.js'));
  assert.equal(await page.locator('.banner').count(), 0, 'the notice went once Chinese loaded');
  await screenshot(page, 'smoke-zh');
  // The console's errors: the blocked fetch alone.
  assert.deepEqual(page.consoleErrors.filter((e) => !/strings\/zh\.js|net::ERR_FAILED/.test(e)), []);
});
