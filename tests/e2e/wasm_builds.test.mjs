// The two builds of the core (build.sh): Chromium loads www/pkg-relaxed, whose matmul kernel fuses
// multiply and add with relaxed-simd; `?wasm=simd128` in the page's address forces www/pkg, the plain
// simd128 build every other browser falls back to. Both must give the built-in model's logits for
// the same sentence within the trace contract's tolerance (2e-4 of the largest |logit|).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, openPage, settled, startServer } from './helpers.mjs';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch({ webgpu: false });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// The page at `query`, on the built-in model and its English sample: which core it runs, the
// sentence's ids and the run's logits.
async function run(query) {
  const page = await openPage(browser, `${server.url}${query}#lang=en`);
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready', null, { timeout: 120_000 });
  await settled(page);
  const out = await page.evaluate(async () => ({
    build: await window.attnscope.call('coreBuild'),
    ids: window.attnscope.app.state.tokens.ids,
    logits: Array.from(await window.attnscope.tensor('logits')),
  }));
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
  return out;
}

test('Chromium runs the relaxed-simd core, and the forced simd128 core gives the same logits', async () => {
  const relaxed = await run('');
  const plain = await run('?wasm=simd128');
  assert.equal(relaxed.build, 'relaxed-simd');
  assert.equal(plain.build, 'simd128');
  assert.deepEqual(plain.ids, relaxed.ids);
  assert.ok(relaxed.ids.length > 3, 'the sample has tokens');
  assert.equal(plain.logits.length, relaxed.logits.length);
  assert.ok(relaxed.logits.length >= relaxed.ids.length * 6400, 'logits for every token over the vocabulary');
  let scale = 0;
  let worst = 0;
  for (let i = 0; i < relaxed.logits.length; i++) {
    assert.ok(Number.isFinite(relaxed.logits[i]) && Number.isFinite(plain.logits[i]), `finite logit at ${i}`);
    scale = Math.max(scale, Math.abs(relaxed.logits[i]));
    worst = Math.max(worst, Math.abs(relaxed.logits[i] - plain.logits[i]));
  }
  assert.ok(scale > 1, `logits of a trained model (largest |logit| ${scale})`);
  assert.ok(worst / scale <= 2e-4, `relaxed-simd and simd128 differ by ${(worst / scale).toExponential(2)} of the largest |logit|`);
});
