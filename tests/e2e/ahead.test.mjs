// The built-in model's first numbers, computed ahead (www/page/ahead.js, tools/ahead.mjs): the
// committed file holds exactly what the core computes now for each language's opening sentence, on
// the model file it names; a first visit draws them before the weights arrive, and the run then
// draws the same numbers in the same place; any other state waits for its run.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { liveNumbers, modelHash } from '../../tools/ahead.mjs';
import { cleanScreenshot, openPage, serverAndBrowser } from './helpers.mjs';

const env = serverAndBrowser();
const FILE = new URL('../../www/models/builtin/ahead.json', import.meta.url);
const AGAIN = 'the built-in model’s numbers computed ahead are out of date: run `node tools/ahead.mjs` after ./build.sh build';

// A page whose core (its wasm) is held back until release() is called, as on a slow link, where the
// weights and the wasm are still on their way after config.json and the weights' header; no service
// worker, so that every request meets the route.
async function heldPage(hash) {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const page = await openPage(env.browser, 'about:blank', { serviceWorkers: 'block', viewport: { width: 1366, height: 768 } });
  await page.route(/\/attnscope_bg\.wasm$/, async (route) => {
    await held;
    await route.continue().catch(() => {});
  });
  await page.goto(new URL(hash, env.server.url).href);
  return { page, release };
}

// What the overview's first screen shows of the numbers: tokens, the prediction, the route's head.
function shown(page) {
  return page.evaluate(() => {
    const box = document.querySelector('.ov-predict');
    const rect = box.getBoundingClientRect();
    return {
      tokens: [...document.querySelectorAll('.ov-tokens .ov-token')].map((n) => n.textContent),
      count: document.querySelector('.ov-tokens .ov-sub').textContent,
      prediction: document.querySelector('.ov-prediction').innerText,
      next: document.querySelector('.ov-after').innerText,
      head: document.querySelector('a[data-route="attention"]').getAttribute('href'),
      headText: document.querySelector('a[data-route="attention"] .ov-route-head')?.textContent ?? null,
      place: [Math.round(rect.left), Math.round(rect.top), Math.round(rect.width), Math.round(rect.height)],
    };
  });
}

test('the committed numbers computed ahead are the core’s, for every language, on the model file they name', async () => {
  const file = JSON.parse(await readFile(FILE, 'utf8'));
  assert.equal(file.model.sha256, await modelHash(), AGAIN);
  assert.deepEqual(Object.keys(file.numbers).sort(), ['en', 'zh']);
  for (const [lang, ahead] of Object.entries(file.numbers)) {
    const page = await openPage(env.browser, new URL(`#lang=${lang}`, env.server.url).href);
    const live = await liveNumbers(page);
    const exact = (n) => ({ ...n, top: n.top.map(({ id, piece }) => ({ id, piece })), head: n.head && { ...n.head, score: 0 } });
    assert.deepEqual(exact(ahead), exact(live), `${lang}: ${AGAIN}`);
    // The core's builds differ in their last bits (relaxed-simd's fused multiply-add): equal to 1e-6.
    for (const [i, c] of ahead.top.entries()) assert.ok(Math.abs(c.p - live.top[i].p) <= 1e-6, `${lang}: p of ${c.piece}: ${c.p} vs ${live.top[i].p}; ${AGAIN}`);
    assert.ok(Math.abs(ahead.head.score - live.head.score) <= 1e-6, `${lang}: the clearest head's score; ${AGAIN}`);
    assert.deepEqual(page.consoleErrors, []);
    await page.close();
  }
});

test('a first visit draws the built-in model’s numbers before its core is in; the run then draws the same, in the same place', async () => {
  for (const [hash, lang] of [['', 'en'], ['#lang=zh', 'zh']]) {
    const { page, release } = await heldPage(hash);
    await page.waitForSelector('.ov-predict[data-numbers="ahead"]', { timeout: 60_000 });
    assert.equal(await page.evaluate(() => window.attnscope.app.model), null, `${lang}: drawn while the model still loads`);
    const ahead = await shown(page);
    if (lang === 'en') await cleanScreenshot(page, 'ahead-before-weights');
    assert.ok(ahead.tokens.length > 5 && !ahead.tokens.includes('…'), `${lang}: the tokens are drawn: ${ahead.tokens}`);
    assert.ok(ahead.headText, `${lang}: the route names the clearest head`);
    release();
    await page.waitForSelector('.ov-predict[data-numbers="run"]', { timeout: 120_000 });
    assert.deepEqual(await shown(page), ahead, `${lang}: the run draws what was drawn ahead`);
    assert.deepEqual(page.consoleErrors, []);
    await page.close();
  }
});

test('any other state waits for its own run: another sentence, padding, BOS off, no causal mask, a knocked-out head', async () => {
  for (const hash of ['#text=Hello%20there', '#pad=1', '#bos=0', '#causal=false', '#ablate=0.1']) {
    const { page, release } = await heldPage(hash);
    await page.waitForSelector('.ov-predict.ov-waiting', { timeout: 60_000 });
    // The file is read by then (boot.js asks for it first); give the page a moment to misuse it.
    await page.waitForTimeout(500);
    assert.equal(await page.locator('.ov-predict[data-numbers="ahead"]').count(), 0, `${hash}: nothing drawn ahead`);
    release();
    await page.waitForSelector('.ov-predict[data-numbers="run"]', { timeout: 120_000 });
    await page.close();
  }
});

test('a damaged or missing file of numbers computed ahead is as if there were none: the overview waits for its run, with no error', async () => {
  for (const answer of [{ status: 200, body: '{"numbers": [1, 2' }, { status: 404, body: 'not here' }]) {
    let release;
    const held = new Promise((resolve) => (release = resolve));
    const page = await openPage(env.browser, 'about:blank', { serviceWorkers: 'block' });
    await page.route(/\/models\/builtin\/ahead\.json$/, (route) => route.fulfill({ ...answer, contentType: 'application/json' }));
    await page.route(/\/attnscope_bg\.wasm$/, async (route) => {
      await held;
      await route.continue().catch(() => {});
    });
    await page.goto(env.server.url);
    await page.waitForSelector('.ov-predict.ov-waiting', { timeout: 60_000 });
    await page.waitForTimeout(500);
    assert.equal(await page.locator('.ov-predict[data-numbers="ahead"]').count(), 0, `${answer.status}: nothing drawn ahead`);
    release();
    await page.waitForSelector('.ov-predict[data-numbers="run"]', { timeout: 120_000 });
    // The 404 is the browser's own line about the failed request; nothing else.
    assert.deepEqual(page.consoleErrors.filter((e) => !/status of 404/.test(e)), [], `${answer.status}`);
    await page.close();
  }
});
