// The first look and the return visit, as a reader on a slow link meets them: www/ served as GitHub
// Pages serves a site (tools/bench/pages_host.mjs: ETag, max-age 600, gzip, no cross-origin isolation),
// the link simulated on the host (MBPS, default 20, and 40 ms before each answer's first byte), a fresh
// Chromium profile at 1366 × 768. For each of ROUNDS fresh profiles: the first visit, then a second
// visit in the same profile. Printed per visit: the first picture (the overview's diagram drawn), the
// built-in model's numbers (the overview's prediction: computed ahead, www/page/ahead.js, or by the
// run), the run's own numbers (the core ready to explore: its prediction drawn), and what the host sent.
//
//   ./build.sh build && node tools/bench/first_look.mjs [rounds]      (MBPS=5 for a slower link;
//   SITE=<folder> serves another copy of www/, to compare two versions in the same hour)
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../../tests/e2e/helpers.mjs';
import { startPagesHost } from './pages_host.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROUNDS = Number(process.argv[2] ?? 3);
const MBPS = Number(process.env.MBPS ?? 20);
const LATENCY_MS = Number(process.env.LATENCY_MS ?? 40);

// Marks, in ms from the navigation's start: the diagram's first block, the built-in model's
// prediction in the overview (computed ahead or run), and the run's.
const MARKS = () => {
  const look = (window.__look = {});
  const tick = () => {
    if (!look.picture && document.querySelector('.ov-diagram .ov-block')) look.picture = performance.now();
    const app = window.attnscope?.app;
    const run = app?.source?.kind === 'builtin' && document.querySelector('.ov-prediction .ov-predict:not(.ov-waiting):not([data-numbers="ahead"])');
    if (!look.numbers && (run || document.querySelector('.ov-prediction .ov-predict[data-numbers="ahead"]'))) look.numbers = performance.now();
    if (!look.live && run) look.live = performance.now();
    if (!look.live) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  // The main thread's long frames (Long Animation Frames), with the scripts that took them.
  look.frames = [];
  new PerformanceObserver((list) => {
    for (const f of list.getEntries()) {
      look.frames.push({ start: f.startTime, duration: f.duration, blocking: f.blockingDuration, render: f.renderStart ? f.startTime + f.duration - f.renderStart : 0, scripts: f.scripts.map((s) => ({ what: `${s.invokerType} ${s.invoker}`.slice(0, 80), source: `${s.sourceURL.replace(location.origin, '')}:${s.sourceFunctionName}`, duration: s.duration, compile: s.forcedStyleAndLayoutDuration })) });
    }
  }).observe({ type: 'long-animation-frame', buffered: true });
};

async function visit(context, host) {
  host.reset();
  const page = await context.newPage();
  await page.addInitScript(MARKS);
  await page.goto(host.url);
  await page.waitForFunction(() => window.__look?.live, null, { timeout: 180_000, polling: 100 }).catch(async (e) => {
    throw new Error(`no numbers: ${JSON.stringify(await page.evaluate(() => ({ look: window.__look, phase: window.attnscope?.app?.phase, source: window.attnscope?.app?.source?.kind })))}`, { cause: e });
  });
  const look = await page.evaluate(() => window.__look);
  // What the page goes on to fetch after the numbers (the service worker's copies) counts too.
  await page.waitForTimeout(3000);
  const result = { picture: look.picture, numbers: look.numbers, live: look.live, sentMB: host.sent() / 1e6, requests: host.requests().length };
  // FRAMES=1: the main thread's frames over 50 ms until the numbers, with their longest scripts.
  if (process.env.FRAMES) {
    for (const f of look.frames.filter((f) => f.start < look.live)) {
      console.log(`  frame at ${Math.round(f.start)} ms: ${Math.round(f.duration)} ms (blocking ${Math.round(f.blocking)}, render ${Math.round(f.render)})`);
      for (const x of f.scripts.sort((a, b) => b.duration - a.duration).slice(0, 3)) console.log(`      ${Math.round(x.duration)} ms ${x.what} ${x.source}`);
    }
  }
  // REQUESTS=1: every request the host answered, with its bytes, and when it started and ended (ms
  // from the navigation, about: the host's clock starts at the page's first request).
  if (process.env.REQUESTS) for (const r of host.requests()) console.log(`  ${String(Math.round(r.start)).padStart(6)} ${String(Math.round(r.end ?? -1)).padStart(6)} ms  ${r.status} ${r.bytes} ${r.path}`);
  await page.close();
  return result;
}

const host = await startPagesHost(resolve(ROOT, process.env.SITE ?? 'www'), { mbps: MBPS, latencyMs: LATENCY_MS });
console.log(`first look at ${MBPS} Mbps, ${LATENCY_MS} ms a request; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
const fmt = (r) => `picture ${(r.picture / 1000).toFixed(2)} s, numbers ${(r.numbers / 1000).toFixed(2)} s, run's numbers ${(r.live / 1000).toFixed(2)} s, sent ${r.sentMB.toFixed(2)} MB in ${r.requests} requests`;
try {
  for (let round = 0; round < ROUNDS; round++) {
    // A profile on disk, as a reader's browser has: its HTTP cache keeps large files (a context
    // without one keeps only small ones in memory).
    const profile = await mkdtemp(join(tmpdir(), 'attnscope-first-look-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS.filter((a) => a !== '--enable-unsafe-webgpu'), headless: true, viewport: { width: 1366, height: 768 } });
    try {
      const first = await visit(context, host);
      const second = await visit(context, host);
      console.log(`round ${round + 1}: first visit: ${fmt(first)}`);
      console.log(`round ${round + 1}: return visit: ${fmt(second)}`);
    } finally {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    }
  }
} finally {
  await host.close();
}
console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
