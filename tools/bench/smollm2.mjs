// SmolLM2-135M (www/models/smollm2/, the page's real model) in Debian's headless Chromium: how long its
// download and load take from this machine's loopback (the model panel's entry, in a fresh profile),
// how long its load takes from the browser's kept copy (a second visit: no download), a run with the
// page's full trace at T = 64 and T = 256 (in the worker, the build it picks: threads where the page is
// cross-origin isolated, as tools/serve.mjs serves it), and the memory the tab holds: the core's
// WebAssembly memory (the worker's coreInfo: it grows and never shrinks, so this is its high-water
// mark), the page's own measure (performance.measureUserAgentSpecificMemory on an isolated page: the
// page's heap with the kept copy of the file, and the workers' heaps, where it counts the threads
// build's shared memory but not the one-thread builds' memory) and the RSS of Chromium's renderers.
// Usage: ./build.sh build && node tools/bench/smollm2.mjs   (ROUNDS=5; WASM=relaxed-simd or simd128: that
// one-thread build on the isolated page; ISOLATION=off: served as a host without COOP/COEP serves it)
import { readFileSync, readdirSync } from 'node:fs';
import { launch, settled, startServer } from '../../tests/e2e/helpers.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const MiB = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;

// The resident memory of Chromium's renderer processes (the page, its worker and the threads' pool
// live in one), from /proc: only this benchmark's browser runs.
function rendererRss() {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chromium') || !cmd.includes('--type=renderer')) continue;
      total += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const server = await startServer({ isolated: process.env.ISOLATION !== 'off' });
// Eager: the browser measures at once rather than at its next garbage collection.
const browser = await launch({ webgpu: false, extra: ['--enable-blink-features=ForceEagerMeasureMemory'] });
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  let page = await context.newPage();
  await page.goto(`${server.url}${process.env.WASM ? `?wasm=${process.env.WASM}` : ''}#lang=en&view=overview`);
  await page.waitForFunction(() => window.attnscope?.app?.source, null, { timeout: 120_000 });
  await settled(page);
  const build = await page.evaluate(() => window.attnscope.call('coreInfo'));

  // Download + load, from the click to the model loaded (its first run excluded), and the part of it
  // the download took (the progress bar at its total).
  const load = await page.evaluate(async () => {
    const t0 = performance.now();
    let downloaded = null;
    const bar = document.querySelector('.model-progress-bar');
    const watch = new MutationObserver(() => {
      if (downloaded === null && bar.max > 1e6 && bar.value === bar.max) downloaded = performance.now() - t0;
    });
    watch.observe(bar, { attributes: true });
    document.querySelector('.segment[data-source="smollm2"]').click();
    while (window.attnscope.app.loading || window.attnscope.app.source?.kind !== 'smollm2') await new Promise((r) => setTimeout(r, 5));
    watch.disconnect();
    return { total: performance.now() - t0, downloaded };
  });
  await settled(page);
  // Kept once it has run; then a second visit reads it back from IndexedDB.
  await page.waitForSelector('.model-smollm2-kept:not([hidden])', { timeout: 120_000 });
  const link = await page.evaluate(() => window.attnscope.link());
  await page.close();
  page = await context.newPage();
  const t1 = Date.now();
  await page.goto(link);
  await page.waitForFunction(() => !window.attnscope?.app?.loading && window.attnscope?.app?.source?.restored === true, null, { timeout: 120_000, polling: 10 });
  const restored = Date.now() - t1;
  await settled(page);

  // The browser's measure of what the tab holds, page and workers, by scope.
  const memory = () =>
    page.evaluate(async () => {
      if (!self.crossOriginIsolated || !performance.measureUserAgentSpecificMemory) return null;
      const m = await performance.measureUserAgentSpecificMemory();
      const byScope = {};
      for (const part of m.breakdown) for (const a of part.attribution) byScope[a.scope] = (byScope[a.scope] ?? 0) + part.bytes;
      return { bytes: m.bytes, byScope };
    });
  const wasmBytes = async () => (await page.evaluate(() => window.attnscope.call('coreInfo'))).memoryBytes;
  const memoryLoaded = { wasm: await wasmBytes(), measured: await memory(), rss: rendererRss() };

  // Runs with the page's full trace (every layer, as the views ask), random ordinary tokens.
  const runs = await page.evaluate(
    async ({ ROUNDS }) => {
      let seed = 1;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
      const ids = (T) => Array.from({ length: T }, () => 1000 + (next() % 40000));
      const out = {};
      for (const T of [64, 256]) {
        await window.attnscope.call('run', { args: { ids: ids(T), attention_mask: null, prefix_len: 0, causal: true, layers: null, backend: 'cpu' } }); // warm-up
        const wall = [];
        const core = [];
        for (let r = 0; r < ROUNDS; r++) {
          const t0 = performance.now();
          const result = await window.attnscope.call('run', { args: { ids: ids(T), attention_mask: null, prefix_len: 0, causal: true, layers: null, backend: 'cpu' } });
          wall.push(performance.now() - t0);
          core.push(result.ms);
        }
        out[T] = { wall, core };
      }
      return out;
    },
    { ROUNDS },
  );
  const memoryRun = { wasm: await wasmBytes(), measured: await memory(), rss: rendererRss() };

  console.log(`Chromium ${browser.version()}, core build ${build.build} (${build.threads} thread${build.threads === 1 ? '' : 's'}), ${new Date().toISOString().slice(0, 10)}`);
  console.log('');
  console.log('| SmolLM2-135M Q4_1 (98 MB) | time |');
  console.log('|---|---|');
  console.log(`| download + load, loopback (click to loaded) | ${(load.total / 1000).toFixed(2)} s (download ${load.downloaded === null ? '?' : (load.downloaded / 1000).toFixed(2)} s) |`);
  console.log(`| load from the browser's kept copy (a second visit, page load to loaded) | ${(restored / 1000).toFixed(2)} s |`);
  for (const T of [64, 256]) console.log(`| run with the full trace, T = ${T} (median of ${ROUNDS}) | ${median(runs[T].wall).toFixed(0)} ms (core ${median(runs[T].core).toFixed(0)} ms) |`);
  console.log('');
  const said = ({ wasm, measured, rss }) =>
    `core's WebAssembly memory ${MiB(wasm)}; ${measured ? `the browser's measure ${MiB(measured.bytes)} (${Object.entries(measured.byScope).map(([s, b]) => `${s} ${MiB(b)}`).join(', ')})` : 'no browser measure (the page is not cross-origin isolated)'}; renderers' RSS ${MiB(rss)}`;
  console.log(`| memory, loaded from the kept copy, before a run | ${said(memoryLoaded)} |`);
  console.log(`| memory after the T = 256 runs | ${said(memoryRun)} |`);
} finally {
  await browser.close();
  await server.close();
}
