// Shared pieces of the end-to-end tests: the served www/, a headless Chromium, a page that records
// its errors, screenshots into artifacts/. Run with `./build.sh test`, or alone after a build with
// `node --test tests/e2e/*.test.mjs`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { FORMAT1_DEFAULTS } from '../../www/state.js';
import { assertClose, WASM_VS_PYTORCH } from './tolerance.mjs';

export { assertClose, closeness, WASM_VS_PYTORCH } from './tolerance.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// Debian's Chromium. No browser is ever downloaded; CHROMIUM overrides the path.
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox', // CI runs as root
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage', // containers have a small /dev/shm
  '--enable-unsafe-webgpu', // WebGPU on SwiftShader when there is no GPU
];

/**
 * A headless Chromium. Each launch gets a fresh, temporary profile (Playwright's own --user-data-dir).
 * `webgpu: false` leaves out --enable-unsafe-webgpu: a browser without WebGPU's adapter; `extra`
 * adds command-line switches (the benchmarks pass V8 flags this way).
 */
export function launch({ webgpu = true, extra = [] } = {}) {
  const args = webgpu ? CHROMIUM_ARGS : CHROMIUM_ARGS.filter((a) => a !== '--enable-unsafe-webgpu');
  return chromium.launch({ executablePath: CHROMIUM, args: [...args, ...extra], headless: true });
}

/**
 * The site, served by tools/serve.mjs with its Content-Security-Policy. Under `./build.sh test` one
 * server is shared through ATTNSCOPE_URL; otherwise (or for another `root` than www/) this starts one
 * on a free port.
 * Resolves to { url, close }.
 */
export async function startServer({ isolated = true, root = 'www' } = {}) {
  if (process.env.ATTNSCOPE_URL && isolated && root === 'www') return { url: process.env.ATTNSCOPE_URL, close: async () => {} };
  // The page is served cross-origin isolated (COOP/COEP, tools/serve.mjs), as the threads build needs;
  // isolated: false serves it as a host without those headers would.
  const child = spawn(process.execPath, ['tools/serve.mjs', root, '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ATTNSCOPE_ISOLATION: isolated ? 'on' : 'off' },
  });
  const url = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`tools/serve.mjs exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = line.match(/http:\/\/\S+/);
      if (match) resolve(match[0]);
    });
  });
  const close = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', resolve);
      child.kill();
    });
  return { url, close };
}

/**
 * The server and browser most test files share: started before the file's tests and closed after
 * them. Returns {server, browser}, filled in once the tests run.
 */
export function serverAndBrowser() {
  const held = { server: null, browser: null };
  before(async () => {
    held.server = await startServer();
    held.browser = await launch();
  });
  after(async () => {
    await held.browser?.close();
    await held.server?.close();
  });
  return held;
}

/**
 * A new page at `url` whose console errors and uncaught exceptions (CSP violations and failed loads
 * included) collect in page.consoleErrors, so a test can assert that there were none.
 */
export async function openPage(browser, url, options = {}) {
  // options: Playwright's page options ({deviceScaleFactor: 2}: a retina screen's canvases).
  const page = await browser.newPage(options);
  page.consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') page.consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => page.consoleErrors.push(error.stack ?? String(error)));
  await page.goto(url);
  return page;
}

/**
 * A full-page screenshot from the top (a page scrolled by keyboard focus would draw its sticky top bar
 * mid-page), without a tooltip left over from the keyboard.
 */
export async function cleanScreenshot(page, name) {
  await page.evaluate(() => {
    document.activeElement?.blur();
    scrollTo(0, 0);
  });
  return screenshot(page, name);
}

/** Saves a full-page screenshot as artifacts/screenshots/<name>.png and returns its path. */
export async function screenshot(page, name) {
  const dir = join(ROOT, 'artifacts', 'screenshots');
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${name}.png`);
  // A full-page capture of a tall view on a busy 2-core machine can take longer than Playwright's 30 s.
  await page.screenshot({ path, fullPage: true, timeout: 90_000 });
  return path;
}

/** Resolves once no run is in flight and the active view has drawn (window.attnscope.settled). */
export function settled(page) {
  return page.waitForFunction(() => window.attnscope?.settled().then(() => true), null, { timeout: 60_000 });
}

/**
 * The fragment of a page on the random model with format 1's defaults (hidden 64, 2 layers, 4 heads,
 * 2 KV heads, seed 42, its English sentence), what a plain link opened before format 2, plus plain
 * `fields` ({view: 'grid'}). A link that names no model now opens the built-in one.
 */
export function randomModel(fields = {}) {
  return `#${new URLSearchParams({ model: 'random', lang: 'en', text: FORMAT1_DEFAULTS.text, ...fields })}`;
}

/** Switches the page to a view (a plain "view=…" field changes only that) and waits for it to draw. */
export async function go(page, view) {
  await page.evaluate((v) => {
    location.hash = `view=${v}`;
  }, view);
  await page.waitForSelector(`.view-${view}`);
  await settled(page);
}

/** Moves a heatmap's keyboard focus to cell (r, c); returns the tooltip's exact value and its text. */
export async function readCell(page, canvas, r, c) {
  await canvas.evaluate((node) => node.blur()); // a heatmap forgets its cell on blur
  await canvas.focus();
  await canvas.press('ArrowRight'); // the first key shows cell (0, 0)
  for (let i = 0; i < r; i++) await canvas.press('ArrowDown');
  for (let i = 0; i < c; i++) await canvas.press('ArrowRight');
  const tooltip = page.locator('#tooltip');
  return { value: await tooltip.getAttribute('data-value'), text: await tooltip.innerText() };
}

/** Polls `check` in the page (it may be async) until it holds, for at most 30 s. */
export async function until(target, check, arg) {
  for (const started = Date.now(); !(await target.evaluate(check, arg)); ) {
    if (Date.now() - started >= 30_000) throw new Error(`waited 30 s for ${check}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Opens lesson `id` through a plain link and waits until the page has rewritten the address as a whole
 * link (only then is the navigation done: an edit made before would be undone by it) and has drawn.
 */
export async function openLesson(page, id) {
  const { view, lesson: shown } = await page.evaluate(() => window.attnscope.getState());
  if (view === 'lessons' && shown === id) return settled(page);
  await page.evaluate((l) => {
    location.hash = `view=lessons&lesson=${l}`;
  }, id);
  await page.waitForSelector(`.lesson-tab[data-lesson="${id}"][aria-current="page"]`);
  await until(page, async (l) => window.attnscope.getState().lesson === l && new URL(await window.attnscope.link()).hash === location.hash, id);
  await settled(page);
}

/** softmax of a row of numbers, computed here, independently of the page. */
export function softmax(row) {
  const m = Math.max(...row);
  const e = row.map((v) => Math.exp(v - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
}

/**
 * The largest difference between two arrays, relative to the reference's largest magnitude: how far
 * apart two runs are. A comparison with a reference is assertClose's (tolerance.mjs), entry by entry.
 */
export function relDiff(ours, reference) {
  if (ours.length !== reference.length) throw new Error(`${ours.length} numbers against ${reference.length}`);
  let scale = 0;
  let worst = 0;
  ours.forEach((a, i) => {
    scale = Math.max(scale, Math.abs(reference[i]));
    worst = Math.max(worst, Math.abs(a - reference[i]));
  });
  return worst / scale;
}

/**
 * The loaded checkpoint computes PyTorch's numbers for its fixture's sentence: layer 0's probs (each
 * row summing to 1) and the last position's logits; and not a random model's numbers. `ckpt`:
 * {config: config.json's text, expected: expected.json} from tests/fixtures/checkpoints.
 */
export async function assertComputesLikePyTorch(page, ckpt) {
  const app = () => page.evaluate(() => ({ model: window.attnscope.app.model, state: window.attnscope.app.state }));
  const tensor = (name) => page.evaluate(async (n) => Array.from(await window.attnscope.tensor(n)), name);
  const { state, model } = await app();
  if (state.text !== ckpt.expected.text) {
    await page.fill('#text', ckpt.expected.text);
    await page.waitForFunction((t) => window.attnscope.app.state.text === t, ckpt.expected.text);
    await settled(page);
  }
  assert.deepEqual((await app()).state.tokens.ids, ckpt.expected.ids, 'the checkpoint’s tokenizer gives PyTorch’s ids');
  const probs = await tensor('layers.0.attn.probs');
  const T = ckpt.expected.ids.length;
  for (let row = 0; row < probs.length / T; row++) {
    const sum = probs.slice(row * T, row * T + T).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `softmax row ${row} sums to ${sum}`);
  }
  assertClose(WASM_VS_PYTORCH, 'layers.0.attn.probs', probs, ckpt.expected.probs);
  const logits = await tensor('logits');
  const last = logits.slice(logits.length - model.vocab_size);
  assertClose(WASM_VS_PYTORCH, 'logits, last row', last, ckpt.expected.logits_last);

  const config = JSON.parse(ckpt.config);
  const random = await page.evaluate(
    ({ config: c, ids }) => window.attnscope.call('variantTensors', { config: c, seed: 42, args: { ids, attention_mask: null, prefix_len: 0, causal: true, layers: null }, names: ['layers.0.attn.probs'] }),
    { config, ids: ckpt.expected.ids },
  );
  const randomProbs = Array.from(random.tensors[0].data);
  assert.ok(relDiff(probs, randomProbs) > 1e-2, 'the checkpoint’s probs are not a random model’s of the same shape');
}
