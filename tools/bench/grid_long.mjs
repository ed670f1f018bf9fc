// The head grid on a long input, in Debian's headless Chromium (1280 × 720, device pixel ratio 1):
// the built-in model on a text of about 450 tokens (its English samples repeated, cut with the page's
// tokenizer), and the main thread's time for a grid redraw, switching the stage between the scaled
// scores and the softmax weights. Each switch is timed from app.set() until the view has settled and
// the next frame has been painted (performance.now()); a long-task observer records the longest
// uninterrupted main-thread task in that span and the sum of all long tasks (50 ms and more). The tensors come from the page's cache after a first
// pass, so this is the grid's own work: pooling, painting, layout. It also prints the grid's size.
// Usage: ./build.sh build && node tools/bench/grid_long.mjs   (prints a Markdown table for BENCHMARKS.md)
import { launch, openPage, startServer, settled } from '../../tests/e2e/helpers.mjs';

const TOKENS = 450;
const REPEATS = 10;

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const row = (what, xs) => `| ${what} | ${quantile(xs, 0.5).toFixed(1)} | ${Math.max(...xs).toFixed(1)} | ${xs.length} |`;

const server = await startServer();
const browser = await launch();
try {
  // A visit without a link opens the built-in model; then only the view changes.
  const page = await openPage(browser, new URL('index.html', server.url).href);
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120000 });
  await page.evaluate(() => {
    location.hash = 'view=grid';
  });
  await page.waitForSelector('.view-grid');
  const text = await page.evaluate(async (n) => {
    const { app } = window.attnscope;
    const samples = await (await fetch('./models/builtin/samples.json')).json();
    let words = [];
    while (words.length < 4 * n) words = words.concat(samples.en.join(' ').split(' '));
    let lo = 1;
    let hi = words.length;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const { ids } = await app.call('tokenize', { text: words.slice(0, mid).join(' ') });
      if (ids.length <= n) lo = mid;
      else hi = mid - 1;
    }
    return words.slice(0, lo).join(' ');
  }, TOKENS);
  await page.fill('#text', text);
  await page.waitForFunction(() => window.attnscope.app.state.tokens.ids.length > 400, null, { timeout: 60000 });
  await settled(page);
  const result = await page.evaluate(async (repeats) => {
    const { app, settled } = window.attnscope;
    const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
    const longest = [];
    const busy = [];
    let tasks = [];
    new PerformanceObserver((list) => tasks.push(...list.getEntries())).observe({ type: 'longtask' });
    for (const stage of ['scores', 'probs']) {
      app.set({ stage });
      await settled(); // the first pass fetches the stage's tensors
    }
    const ms = [];
    for (let r = 0; r < repeats; r++) {
      await frame();
      tasks = [];
      const t0 = performance.now();
      app.set({ stage: r % 2 ? 'probs' : 'scores' });
      await settled();
      await frame();
      await frame();
      ms.push(performance.now() - t0);
      await new Promise((done) => setTimeout(done, 50)); // long tasks are reported after they end
      const mine = tasks.filter((e) => e.startTime >= t0).map((e) => e.duration);
      longest.push(Math.max(0, ...mine));
      busy.push(mine.reduce((a, b) => a + b, 0));
    }
    const box = document.querySelector('.grid-scroll').getBoundingClientRect();
    const thumb = document.querySelector('.thumb').getBoundingClientRect();
    return {
      tokens: app.state.tokens.ids.length,
      ms,
      longest,
      busy,
      grid: { viewport: innerWidth, box: box.width, thumb: [thumb.width, thumb.height], page: document.documentElement.scrollHeight },
    };
  }, REPEATS);
  console.log(`built-in model, T = ${result.tokens} tokens; grid box ${result.grid.box.toFixed(0)} px in a ${result.grid.viewport} px viewport; thumbnail ${result.grid.thumb.map((v) => v.toFixed(0)).join(' × ')} px; page ${result.grid.page} px tall`);
  console.log('| what | median ms | max ms | n |');
  console.log('|---|---|---|---|');
  console.log(row('grid redraw (stage switch): app.set to the next frame painted', result.ms));
  console.log(row('longest main-thread task during it (long-task observer)', result.longest));
  console.log(row('all long tasks during it, summed', result.busy));
} finally {
  await browser.close();
  await server.close();
}
