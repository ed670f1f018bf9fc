// Long work in the page: a run reports its progress layer by layer with a Cancel button; cancelling
// stops it at once (the worker is replaced), says so in the page, and the same model keeps working.
// The first look on a slow link: the worker, the weights and the tokenizer start at once, before the
// page's modules are in, and the download's progress has its total from its first byte.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { launch, openPage, randomModel, screenshot, settled, startServer } from './helpers.mjs';

const WEIGHTS = new URL('../../www/models/builtin/model.safetensors', import.meta.url);

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

test('a first visit on a slow link: worker, weights and tokenizer start at once, before the page’s modules are in; the progress has its total from the first byte; the shape drawn meanwhile is the core’s', async (t) => {
  if (!existsSync(WEIGHTS)) return t.skip('www/models/builtin is not there yet');
  const size = statSync(WEIGHTS).size;
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, serviceWorkers: 'block' });
  const slow = await context.newPage();
  slow.consoleErrors = [];
  slow.on('console', (m) => m.type() === 'error' && slow.consoleErrors.push(m.text()));
  slow.on('pageerror', (e) => slow.consoleErrors.push(String(e)));
  // Every request, in the order the page asked for them.
  const events = [];
  slow.on('request', (r) => events.push(['request', new URL(r.url()).pathname]));
  // The model panel's progress bar, each frame: its text, and its value and max where it has them.
  await slow.addInitScript(() => {
    const seen = (window.progressSeen = []);
    const look = () => {
      const bar = document.querySelector('.model-progress-bar');
      if (bar && !bar.closest('[hidden]')) seen.push({ text: document.querySelector('.model-progress-text')?.textContent, value: bar.hasAttribute('value') ? bar.value : null, max: bar.max });
      if (!window.attnscope?.app?.model) requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  });
  const cdp = await context.newCDPSession(slow);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 1.5e6, uploadThroughput: 1e6 });
  await slow.goto(server.url);
  // The diagram from config.json while the weights arrive; kept to compare with the core's.
  await slow.waitForSelector('.view-overview .ov-fact');
  const preview = await slow.evaluate(() => window.attnscope.app.preview?.config ?? null);
  await slow.waitForFunction(() => window.attnscope?.app?.source?.kind === 'builtin' && document.querySelector('.ov-prediction .ov-predict:not(.ov-waiting)'), null, { timeout: 120_000 });
  await settled(slow);

  const at = (kind, file) => events.findIndex(([k, p]) => k === kind && p.endsWith(file));
  // What the assertions below look at, said when one fails.
  const order = JSON.stringify(events.filter(([, p]) => /models\/builtin\/(model|tokenizer)|\/worker\.js|patch\.js/.test(p)));
  const count = (file) => events.filter(([k, p]) => k === 'request' && p.endsWith(file)).length;
  assert.equal(count('/models/builtin/model.safetensors'), 1, 'the weights downloaded once');
  assert.equal(count('/models/builtin/tokenizer.json'), 1, 'the tokenizer downloaded once');
  assert.ok(at('request', '/worker.js') < at('request', '/views/patch.js'), `the worker asked for before the page’s last modules: ${order}`);
  assert.ok(at('request', '/models/builtin/model.safetensors') < at('request', '/views/patch.js'), `the weights asked for before the page’s last modules: ${order}`);
  // The page's own record of its downloads: when the tokenizer's began, when the weights' last byte came.
  const timing = await slow.evaluate(() => Object.fromEntries(performance.getEntriesByType('resource').filter((e) => /models\/builtin\/(model\.safetensors|tokenizer\.json)$/.test(e.name)).map((e) => [e.name.split('/').pop(), { start: e.startTime, end: e.responseEnd }])));
  assert.ok(timing['tokenizer.json'].start < timing['model.safetensors'].end, `the tokenizer asked for before the weights are in: ${JSON.stringify(timing)}`);

  const seen = await slow.evaluate(() => window.progressSeen);
  const counted = seen.filter((s) => s.text !== 'Reading the model…');
  assert.ok(counted.length > 0, 'the download’s progress was seen');
  assert.deepEqual(counted.filter((s) => s.value === null || s.max !== size), [], `every report of bytes has the file’s ${size} bytes as its total`);

  assert.ok(preview && preview.dtype === undefined, 'the overview drew from config.json before the core’s check (which adds dtype)');
  const model = await slow.evaluate(() => window.attnscope.app.model);
  for (const [key, value] of Object.entries(preview)) assert.equal(value, model[key], `${key}: the preview’s is the core’s`);
  assert.deepEqual(slow.consoleErrors, []);
  await context.close();
});

test('text typed while the page starts and the model downloads is the reader’s: the first model opens on it, not on the sample sentence', async (t) => {
  if (!existsSync(WEIGHTS)) return t.skip('www/models/builtin is not there yet');
  for (const when of ['before the page’s modules run', 'while the weights download']) {
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, serviceWorkers: 'block' });
    const slow = await context.newPage();
    slow.consoleErrors = [];
    slow.on('pageerror', (e) => slow.consoleErrors.push(String(e)));
    // The weights come 4 s late; the page's own script waits 1.5 s in the first case.
    await slow.route('**/models/builtin/model.safetensors', async (route) => {
      await new Promise((r) => setTimeout(r, 4000));
      await route.continue();
    });
    if (when.startsWith('before')) {
      await slow.route('**/app.js', async (route) => {
        await new Promise((r) => setTimeout(r, 1500));
        await route.continue();
      });
    }
    // The box is there from the first paint (index.html), before any module has run.
    await slow.goto(server.url, { waitUntil: 'commit' });
    await slow.waitForSelector('#text');
    if (when.startsWith('before')) assert.equal(await slow.evaluate(() => window.attnscope), undefined, 'typed before app.js ran');
    // While the weights download the box shows the page's own text (the sample sentence), written by
    // the first open; the reader replaces it. (Phase 'loading' alone is the app's first value, from
    // before that text is written: a fill then could select the empty box and type after the text.)
    else await slow.waitForFunction(() => window.attnscope?.app?.phase === 'loading' && document.getElementById('text').value !== '' && window.attnscope.app.state.text === document.getElementById('text').value);
    const mine = 'The reader typed this while the page was loading.';
    await slow.locator('#text').fill(mine);
    await slow.waitForFunction(() => window.attnscope?.app?.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
    await settled(slow);
    assert.equal(await slow.locator('#text').inputValue(), mine, `${when}: the box keeps the reader’s text`);
    assert.equal(await slow.evaluate(() => window.attnscope.app.state.text), mine, `${when}: the model runs on it`);
    const pieces = await slow.evaluate(() => window.attnscope.app.state.tokens.pieces.join(''));
    assert.match(pieces.replace(/[␣Ġ▁ ]/g, ''), /Thereadertypedthis/, `${when}: its tokens are the reader’s`);
    assert.deepEqual(slow.consoleErrors, []);
    await context.close();
  }
});
