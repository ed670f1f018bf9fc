// Makes docs/screenshot.png, the README's picture, from the real page: serves www/ (tools/serve.mjs,
// through the e2e helpers' startServer), opens the overview on the built-in model with its first
// English sample in Debian's Chromium, waits until the run has finished and the prediction is drawn,
// and saves what a reader sees first 1280 CSS pixels wide (device scale 1, light theme): the sticky
// top bar and its tabs, then the overview's title and its path, tokens → embedding → the stack of
// layers → final norm → logits → the prediction. The window is made just tall enough for that.
//
//   ./build.sh setup && ./build.sh build && node tools/screenshot.mjs [out.png]
//
// (playwright-core, which drives the browser, is one of the tests' npm packages: setup installs it.)
// Run it again when the overview changes: the README's picture should be what a newcomer sees.
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openPage, settled, startServer } from '../tests/e2e/helpers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = process.argv[2] ?? join(ROOT, 'docs', 'screenshot.png');
const WIDTH = 1280;
// The README keeps its picture small: a larger file means the page has changed enough to look at.
const MAX_BYTES = 300 * 1024;

const server = await startServer();
const browser = await launch({ webgpu: false });
try {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 800 }, deviceScaleFactor: 1, colorScheme: 'light', serviceWorkers: 'block' });
  const page = await openPage(context, `${server.url}#model=builtin&view=overview&lang=en`);
  await settled(page);
  // The numbers are drawn: the tokens' chips, the shapes on the arrows and the prediction's bar.
  for (const drawn of ['.ov-token', '.ov-arrow .shape', '.ov-prediction .ov-bar-fill']) {
    await page.waitForSelector(`.view-overview ${drawn}`, { timeout: 60_000 });
  }
  const box = await page.evaluate(() => {
    const top = (selector) => document.querySelector(selector).getBoundingClientRect().top + scrollY;
    const bottom = (selector) => document.querySelector(selector).getBoundingClientRect().bottom + scrollY;
    return { bar: bottom('.topbar'), from: top('.view-overview .ov-head'), to: bottom('.view-overview .ov-prediction') };
  });
  const margin = 16;
  // Under the prediction, less than the gap to the next row (Continue the text), so none of it shows.
  await page.setViewportSize({ width: WIDTH, height: Math.ceil(box.bar + margin + (box.to - box.from) + margin / 2) });
  await page.evaluate((y) => {
    document.activeElement?.blur();
    scrollTo(0, y);
  }, Math.floor(box.from - box.bar - margin));
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  await page.screenshot({ path: OUT });
  if (page.consoleErrors.length) throw new Error(`the page logged errors:\n${page.consoleErrors.join('\n')}`);
  const { size } = await stat(OUT);
  console.log(`${OUT}: ${WIDTH} px wide, ${Math.round(size / 1024)} KiB`);
  if (size > MAX_BYTES) throw new Error(`${OUT} is ${size} bytes, over the ${MAX_BYTES} the README allows`);
} finally {
  await browser.close();
  await server.close();
}
