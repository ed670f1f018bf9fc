// WebGPU against the CPU in the page (issue "WebGPU path", speed): one MiniMind-3-shaped layer (hidden 768,
// 8 query / 4 KV heads, d = 96, FFN 2432, vocabulary 64 so lm_head stays out of it), recording only the
// model-level tensors, at T = 128, 1024 and 4096, both backends on the same Session in the same run.
// In headless Chromium the adapter is SwiftShader (software), so this is a smoke figure, not a GPU's speed.
// Usage: ./build.sh build && node tools/bench/page_gpu.mjs [T ...]   (prints a Markdown table)
import { launch, openPage, startServer } from '../../tests/e2e/helpers.mjs';

const sizes = process.argv.slice(2).map(Number).filter((t) => t > 0);
const TS = sizes.length ? sizes : [128, 1024, 4096];
const REPEATS = 3;
const LIMIT_MS = 600_000; // per backend and size: past it the size is reported as not finished
const LONG_MS = 30_000; // a first run longer than this is the measurement (one run, no repeats)

const server = await startServer();
const browser = await launch();
try {
  const page = await openPage(browser, new URL('index.html', server.url).href);
  const adapter = await page.evaluate(async () => {
    const a = await navigator.gpu?.requestAdapter();
    return a ? `${a.info?.vendor ?? ''} ${a.info?.architecture ?? ''} ${a.info?.description ?? ''}`.trim() || 'unnamed adapter' : null;
  });
  console.log(`Chromium ${browser.version()}, WebGPU adapter: ${adapter ?? 'none'}; ${REPEATS} runs after a warm-up, median (one run where the first took over ${LONG_MS / 1000} s)\n`);
  console.log('| T | CPU ms (wasm) | WebGPU ms | WebGPU / CPU | layer GFLOP/s CPU | WebGPU |\n|---|---|---|---|---|---|');
  for (const T of TS) {
    const r = await page.evaluate(
      async ({ T, REPEATS, LIMIT_MS, LONG_MS }) => {
        const wasm = await import('./pkg/attnscope.js');
        await wasm.default();
        const config = { hidden_size: 768, num_hidden_layers: 1, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 64 };
        const s = wasm.Session.random(JSON.stringify(config), 1);
        await s.enableGpu();
        const request = { ids: Array.from({ length: T }, (_, i) => i % 64), layers: [] };
        const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
        const time = async (f) => {
          const start = performance.now();
          await f(); // warm-up
          const first = performance.now() - start;
          if (first > LIMIT_MS) return null;
          if (first > LONG_MS) return first; // one run is enough at this size (and all there is time for)
          const ms = [];
          for (let i = 0; i < REPEATS; i++) {
            const t0 = performance.now();
            await f();
            ms.push(performance.now() - t0);
          }
          return median(ms);
        };
        const cpu = await time(() => s.run(request));
        const gpu = await time(() => s.runGpu(request));
        s.free();
        return { cpu, gpu };
      },
      { T, REPEATS, LIMIT_MS, LONG_MS },
    );
    // Multiply-adds of the layer: projections and FFN per token, plus q·K and probs·V over the causal half.
    const flops = 2 * T * (768 * 768 * 2 + 768 * 384 * 2 + 3 * 768 * 2432) + 2 * 2 * 8 * 96 * ((T * (T + 1)) / 2);
    const fmt = (ms) => (ms === null ? `over ${LIMIT_MS / 1000} s` : ms.toFixed(1));
    const gf = (ms) => (ms === null ? '–' : (flops / ms / 1e6).toFixed(1));
    const ratio = r.cpu && r.gpu ? (r.gpu / r.cpu).toFixed(1) + 'x' : '–';
    console.log(`| ${T} | ${fmt(r.cpu)} | ${fmt(r.gpu)} | ${ratio} | ${gf(r.cpu)} | ${gf(r.gpu)} |`);
  }
  if (page.consoleErrors.length) console.log('console errors:', page.consoleErrors);
} finally {
  await browser.close();
  await server.close();
}
