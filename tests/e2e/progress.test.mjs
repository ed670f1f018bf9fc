// Long work in the page: a run reports its progress layer by layer with a Cancel button; cancelling
// stops it at once (the worker is replaced), says so in the page, and the same model keeps working.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, openPage, randomModel, screenshot, settled, startServer } from './helpers.mjs';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, new URL(randomModel({ view: 'stepper' }), server.url).href);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('a long run shows its progress by layer and can be cancelled, leaving the model working', async () => {
  // MiniMind-3's full shape: 8 layers of hidden 768, so a long text takes seconds.
  for (const [field, value] of [['num_hidden_layers', '8'], ['hidden_size', '768'], ['num_attention_heads', '8'], ['num_key_value_heads', '4']]) {
    await page.fill(`#cfg-${field}`, value);
  }
  await page.press('#cfg-num_key_value_heads', 'Enter');
  await page.waitForFunction(() => window.attnscope.app.model?.hidden_size === 768, null, { timeout: 120_000 });
  await settled(page);

  await page.fill('#text', 'the quick brown fox jumps over the lazy dog while it rains in the city. '.repeat(30));
  const cancel = page.locator('.status-cancel');
  await cancel.waitFor({ state: 'visible', timeout: 30_000 });
  await page.waitForFunction(() => /layer \d+ of 8/.test(document.getElementById('status').textContent), null, { timeout: 60_000 });
  await screenshot(page, 'progress-running');
  await cancel.click();
  await page.locator('.message-empty', { hasText: 'Stopped' }).waitFor({ timeout: 10_000 });
  await screenshot(page, 'progress-cancelled');
  // "Run again" runs the same text, no edit needed; stopped once more, the text is then changed.
  await page.locator('.message-empty .run-again').click();
  await cancel.waitFor({ state: 'visible', timeout: 30_000 });
  await cancel.click();
  await page.locator('.message-empty', { hasText: 'Stopped' }).waitFor({ timeout: 10_000 });

  await page.fill('#text', 'A short text runs again.');
  await page.waitForFunction(() => window.attnscope.app.phase === 'ready', null, { timeout: 60_000 });
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.app.model.num_hidden_layers), 8, 'the same model after cancelling');
  const probs = await page.evaluate(async () => Array.from(await window.attnscope.tensor('layers.7.attn.probs')).slice(0, 1));
  assert.ok(Math.abs(probs[0] - 1) < 1e-5, 'the first query attends only to itself');
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});
