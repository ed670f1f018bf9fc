// In-page benchmarks of the web app, in Debian's headless Chromium (the speed targets):
//   1. a full forward with trace of a 4-layer, hidden-256 model (8 heads, 4 KV heads) at T = 64, in wasm;
//   2. redraw after switching head (attention map) and step (pipeline stepper) at T = 64, p50 / p95:
//      the work from the state change to the redrawn view, and the time to the next frame after it;
//   3. the same forward natively is `cargo bench` territory; here the baseline in the same run is
//      the 2-layer hidden-64 default model, so the ratio says how the cost scales with size.
// Usage: ./build.sh build && node tools/bench/page.mjs   (prints a Markdown table for BENCHMARKS.md)
import { launch, openPage, startServer } from '../../tests/e2e/helpers.mjs';

const T = 64;
const REPEATS = 30;

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const row = (what, xs) => `| ${what} | ${quantile(xs, 0.5).toFixed(2)} | ${quantile(xs, 0.95).toFixed(2)} | ${xs.length} |`;

const server = await startServer();
const browser = await launch();
try {
  const page = await openPage(browser, new URL("index.html#view=attention", server.url).href);
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready', null, { timeout: 120000 });

  // 1. Forward with full trace, in the page's main thread straight on the wasm module.
  const forward = await page.evaluate(
    async ({ T, REPEATS }) => {
      const wasm = await import('./pkg/attnscope.js');
      await wasm.default();
      const ids = Array.from({ length: T }, (_, i) => (i * 37) % 6400);
      const time = (config) => {
        const s = wasm.Session.random(JSON.stringify(config), 1);
        s.run({ ids }); // warm-up
        const ms = [];
        for (let r = 0; r < REPEATS; r++) {
          const t0 = performance.now();
          s.run({ ids });
          ms.push(performance.now() - t0);
        }
        s.free();
        return ms;
      };
      return {
        big: time({ hidden_size: 256, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 6400 }),
        small: time({ hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, vocab_size: 6400 }),
      };
    },
    { T, REPEATS },
  );

  // 2. Redraws at T = 64: a text cut, with the page's own tokenizer, to exactly T tokens.
  const text = await page.evaluate(async (T) => {
    const wasm = await import('./pkg/attnscope.js');
    const s = wasm.Session.random(JSON.stringify({ hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 1, num_key_value_heads: 1 }), 1);
    s.setTokenizer(await (await fetch('./minimind/tokenizer.json')).text());
    const words = 'the cat sat on the mat because it was tired and the dog ran to the door '.repeat(20).split(' ');
    let n = words.length;
    while (n > 0 && s.tokenize(words.slice(0, n).join(' ')).ids.length > T) n--;
    const text = words.slice(0, n).join(' ');
    s.free();
    return text;
  }, T);
  await page.fill('#text', text);
  await page.waitForFunction((n) => window.attnscope.app.state.tokens.ids.length === n, T, { timeout: 60000 });
  await page.evaluate(() => window.attnscope.settled());
  const tokens = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const redraw = async (patches) =>
    page.evaluate(async (patches) => {
      const { app, settled } = window.attnscope;
      const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
      const work = [];
      const painted = [];
      for (const patch of patches) {
        await frame(); // start each switch at a frame boundary, as a click would
        const t0 = performance.now();
        app.set(patch);
        await settled();
        work.push(performance.now() - t0);
        await frame();
        painted.push(performance.now() - t0);
      }
      return { work, painted };
    }, patches);
  const heads = await page.evaluate(() => window.attnscope.app.model.num_attention_heads);
  const headPatches = Array.from({ length: REPEATS }, (_, i) => ({ head: i % heads }));
  await redraw(headPatches.slice(0, heads)); // warm the tensor cache, as a user who has looked once
  const headMs = await redraw(headPatches);
  await page.evaluate(() => (location.hash = 'view=stepper'));
  await page.evaluate(() => window.attnscope.settled());
  const steps = ['scores', 'masked_scores', 'probs', 'context', 'attn_out'];
  const stepPatches = Array.from({ length: REPEATS }, (_, i) => ({ step: steps[i % steps.length] }));
  await redraw(stepPatches.slice(0, steps.length));
  const stepMs = await redraw(stepPatches);

  const ratio = quantile(forward.big, 0.5) / quantile(forward.small, 0.5);
  console.log(`Chromium ${browser.version()}, T = ${T} (page tokens: ${tokens}), ${REPEATS} repeats each\n`);
  console.log('| what | median ms | p95 ms | n |\n|---|---|---|---|');
  console.log(row('forward + full trace, 4 layers, hidden 256, 8/4 heads (wasm)', forward.big));
  console.log(row('forward + full trace, 2 layers, hidden 64, 4/2 heads (baseline)', forward.small));
  console.log(row('switch head (attention map): state change to view redrawn', headMs.work));
  console.log(row('switch head (attention map): to the next frame', headMs.painted));
  console.log(row('switch step (pipeline stepper): state change to view redrawn', stepMs.work));
  console.log(row('switch step (pipeline stepper): to the next frame', stepMs.painted));
  console.log(`\nratio 4x256 / 2x64 forward (median): ${ratio.toFixed(1)}x`);
  if (page.consoleErrors.length) console.log('console errors:', page.consoleErrors);
} finally {
  await browser.close();
  await server.close();
}
