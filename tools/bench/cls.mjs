// Layout shift while the default page loads: a fresh Chromium profile opens the page with no link
// (the overview on the built-in model) at 1366 × 768 and at a 390 × 844 phone, records every
// layout-shift entry (PerformanceObserver, buffered) until the overview's prediction is drawn and
// then WAIT_MS more, and prints each shift (time, value, whether it followed input) with its
// sources (the element, its rectangle before and after), then the sum that counts for CLS (shifts
// not after input). Lighthouse's CLS takes the worst 5 s session window of these; the sum bounds it.
//
//   node tools/bench/cls.mjs [rounds]        (WAIT_MS=3000 by default; URL=… for another page)
import { loadavg } from 'node:os';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, startServer } from '../../tests/e2e/helpers.mjs';

const ROUNDS = Number(process.argv[2] ?? 1);
const WAIT_MS = Number(process.env.WAIT_MS ?? 3000);
const SIZES = [
  ['desktop', { width: 1366, height: 768 }, false],
  ['phone', { width: 390, height: 844 }, true],
];

// Installed before the page's own scripts: every layout shift, with where its sources moved.
const RECORD = () => {
  window.__shifts = [];
  const name = (node) => {
    if (!node || node.nodeType !== 1) return node ? `#text in ${name(node.parentElement)}` : '?';
    const id = node.id ? `#${node.id}` : '';
    const cls = typeof node.className === 'string' && node.className ? `.${node.className.trim().split(/\s+/).join('.')}` : '';
    return `${node.tagName.toLowerCase()}${id}${cls}`;
  };
  const rect = (r) => `${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.width)}×${Math.round(r.height)}`;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      window.__shifts.push({
        t: Math.round(e.startTime),
        value: e.value,
        input: e.hadRecentInput,
        sources: (e.sources ?? []).map((s) => `${name(s.node)} ${rect(s.previousRect)} → ${rect(s.currentRect)}`),
      });
  }).observe({ type: 'layout-shift', buffered: true });
};

// CLS as the browser reports it: the largest session window (shifts < 1 s apart, at most 5 s long).
function worstWindow(shifts) {
  let worst = 0;
  let sum = 0;
  let first = null;
  let last = null;
  for (const s of shifts.filter((x) => !x.input)) {
    if (first !== null && s.t - last < 1000 && s.t - first < 5000) sum += s.value;
    else {
      sum = s.value;
      first = s.t;
    }
    last = s.t;
    worst = Math.max(worst, sum);
  }
  return worst;
}

const server = await startServer();
const url = process.env.URL ?? server.url;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
console.log(`layout shift over the load of ${url}; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
try {
  for (let round = 0; round < ROUNDS; round++)
    for (const [size, viewport, mobile] of SIZES) {
      const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, serviceWorkers: 'block' });
      const page = await context.newPage();
      await page.addInitScript(RECORD);
      await page.goto(url);
      await page.waitForSelector('.ov-prediction .ov-predict:not(.ov-waiting)', { timeout: 180_000 });
      await page.waitForFunction(() => window.attnscope?.settled().then(() => true), null, { timeout: 60_000 });
      await page.waitForTimeout(WAIT_MS);
      const shifts = await page.evaluate(() => window.__shifts);
      const counted = shifts.filter((s) => !s.input);
      const sum = counted.reduce((a, s) => a + s.value, 0);
      console.log(`\n${size} ${viewport.width}×${viewport.height}: ${counted.length} shifts, sum ${sum.toFixed(4)}, worst window (CLS) ${worstWindow(shifts).toFixed(4)}`);
      for (const s of shifts) {
        console.log(`  ${String(s.t).padStart(6)} ms  ${s.value.toFixed(4)}${s.input ? ' (after input)' : ''}`);
        for (const src of s.sources) console.log(`           ${src}`);
      }
      await context.close();
    }
} finally {
  await browser.close();
  await server.close();
}
