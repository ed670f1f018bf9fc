// The three builds of the core (build.sh), as the worker picks them (www/worker.js): on a
// cross-origin isolated page with more than one core, Chromium loads www/pkg-threads (relaxed-simd,
// the matmuls split across a pool of Web Workers); `?wasm=relaxed-simd` forces www/pkg-relaxed,
// the one-thread build, and `?wasm=simd128` www/pkg, the plain simd128 build every other browser
// falls back to. Splitting the rows across threads leaves every cell's sum as it was, so the threads
// build must give the one-thread build's logits bit for bit; the plain build within the trace
// contract's tolerance (2e-4 of the largest |logit|). A page served without COOP/COEP (a static host
// that sends neither) must fall back to the one-thread build, quietly.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launch, openPage, settled, startServer } from './helpers.mjs';

let server;
let plainHost;
let browser;

before(async () => {
  server = await startServer();
  plainHost = await startServer({ isolated: false });
  browser = await launch({ webgpu: false });
});

after(async () => {
  await browser?.close();
  await server?.close();
  await plainHost?.close();
});

// The page at `query` on `url`, on the built-in model and its English sample: which core it runs,
// the sentence's ids and the run's logits.
async function run(query, url = server.url) {
  const page = await openPage(browser, `${url}${query}#lang=en`);
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready', null, { timeout: 120_000 });
  await settled(page);
  const out = await page.evaluate(async () => ({
    isolated: crossOriginIsolated,
    cores: navigator.hardwareConcurrency,
    build: await window.attnscope.call('coreBuild'),
    info: await window.attnscope.call('coreInfo'),
    ids: window.attnscope.app.state.tokens.ids,
    logits: Array.from(await window.attnscope.tensor('logits')),
  }));
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
  return out;
}

test('Chromium runs the threads core where the page is isolated, the same bits as one thread; simd128 within tolerance', async () => {
  const threaded = await run('');
  const relaxed = await run('?wasm=relaxed-simd');
  const plain = await run('?wasm=simd128');
  assert.equal(threaded.isolated, true, 'tools/serve.mjs makes the page cross-origin isolated');
  assert.ok(threaded.cores > 1, `this machine reports ${threaded.cores} core(s): the threads build needs two`);
  const { memoryBytes: threadedMemory, ...threadedInfo } = threaded.info;
  const { memoryBytes: relaxedMemory, ...relaxedInfo } = relaxed.info;
  assert.deepEqual(threadedInfo, { build: 'threads', threads: Math.min(threaded.cores, 8), threadsError: null });
  assert.equal(relaxed.build, 'relaxed-simd');
  assert.deepEqual(relaxedInfo, { build: 'relaxed-simd', threads: 1, threadsError: null });
  // The core's memory, as the benchmarks read it: the built-in model and its run, a few MiB.
  for (const bytes of [threadedMemory, relaxedMemory]) assert.ok(bytes > 2 ** 20 && bytes < 2 ** 30, `${bytes} bytes of WebAssembly memory`);
  assert.equal(plain.build, 'simd128');
  assert.deepEqual(plain.ids, relaxed.ids);
  assert.deepEqual(threaded.ids, relaxed.ids);
  assert.ok(relaxed.ids.length > 3, 'the sample has tokens');
  assert.ok(relaxed.logits.length >= relaxed.ids.length * 6400, 'logits for every token over the vocabulary');
  assert.equal(threaded.logits.length, relaxed.logits.length);
  const differ = threaded.logits.findIndex((x, i) => !Object.is(x, relaxed.logits[i]));
  assert.equal(differ, -1, `threads and one thread differ first at logit ${differ}`);
  assert.equal(plain.logits.length, relaxed.logits.length);
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

test('a host without COOP/COEP gets the one-thread relaxed-simd core, with no error on the console', async () => {
  const out = await run('', plainHost.url);
  assert.equal(out.isolated, false);
  assert.deepEqual({ ...out.info, memoryBytes: undefined }, { build: 'relaxed-simd', threads: 1, threadsError: null, memoryBytes: undefined });
  assert.ok(out.logits.length >= out.ids.length * 6400 && out.logits.every(Number.isFinite));
});
