// A trap in the WebAssembly core (a panic, or memory it could not get) ends in one sentence and a
// working page: the worker that trapped is replaced and the model that was loaded is rebuilt in the
// new one (www/worker.js, www/worker_client.js). The trap here is real: a hand-set call whose array
// claims 2^30 numbers makes the core's allocator give up, as a malformed message from the page would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launch, openPage, settled, startServer } from './helpers.mjs';

// The sentence in each language; `unreachable` is the trap's own name, the same in both.
const SENTENCES = {
  en: /^The core stopped: it ran out of memory or hit a bug \(unreachable\)\. The last model that loaded has been reloaded\.$/,
  zh: /^核心程序停止了：内存不足或遇到了程序错误（unreachable）。已重新加载上一个成功加载的模型。$/,
};

for (const [lang, SENTENCE] of Object.entries(SENTENCES)) test(`a trap in the core says so in one sentence and the previous model still answers (${lang})`, async (t) => {
  const server = await startServer();
  t.after(server.close);
  const browser = await launch({ webgpu: false });
  t.after(() => browser.close());
  const page = await openPage(browser, `${server.url}#lang=${lang}`);
  await settled(page);
  const logits = () => page.evaluate(async () => Array.from(await window.attnscope.tensor('logits')));
  const before = await logits();
  assert.ok(before.length > 0 && before.every(Number.isFinite));

  for (let i = 0; i < 2; i++) {
    const error = await page.evaluate(() => window.attnscope.call('silu', { z: { length: 2 ** 30 - 16 } }).then(() => null, (err) => err.message));
    assert.match(error ?? 'no error', SENTENCE, `trap ${i + 1}`);
  }

  // The rebuilt model gives the same logits for the same input, and the hand-set calls answer too.
  assert.deepEqual(await logits(), before);
  const z = [-2, 0, 1.5];
  const { values } = await page.evaluate((zs) => window.attnscope.call('silu', { z: Float32Array.from(zs) }), z);
  z.forEach((x, i) => assert.ok(Math.abs(values[i] - x / (1 + Math.exp(-x))) < 1e-6, `silu(${x})`));
  assert.equal(await page.locator('.message-error').count(), 0, 'the page shows no error');

  // A trap while the page has work queued: the reader sees the sentence in place of the view.
  const text = await page.evaluate(() => window.attnscope.getState().text);
  await page.evaluate(() => {
    window.attnscope.call('silu', { z: { length: 2 ** 30 - 16 } }).catch(() => {});
    window.attnscope.setState({ text: 'A different sentence.' });
  });
  const shown = page.locator('.message-error pre');
  await shown.waitFor();
  assert.match(await shown.innerText(), SENTENCE);
  // A sentence in the body font: a monospace face set “run’s” as “run’ s”.
  assert.doesNotMatch(await shown.evaluate((n) => getComputedStyle(n).fontFamily), /^(ui-)?monospace|Menlo|Consolas/);
  // Back to the first sentence: the view returns with the same logits.
  await page.evaluate((first) => window.attnscope.setState({ text: first }), text);
  await settled(page);
  assert.equal(await page.locator('.message-error').count(), 0);
  assert.deepEqual(await logits(), before);
  assert.deepEqual(page.consoleErrors, []);
});
