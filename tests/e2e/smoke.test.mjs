// The site is served and its page is attnscope's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launch, openPage, screenshot, startServer } from './helpers.mjs';

test('index.html loads and is titled attnscope', async (t) => {
  const server = await startServer();
  t.after(server.close);
  const browser = await launch();
  t.after(() => browser.close());

  const page = await openPage(browser, server.url);
  await screenshot(page, 'smoke');

  assert.match(await page.title(), /attnscope/i);
});
