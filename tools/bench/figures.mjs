// Five figures in one blog post, as a blog author makes them: a 700 px post on another site with
// five attnscope figures taken as the Share panel writes them (three <iframe>s, two <attn-scope>
// elements, the hide flags set): one head's attention map, the head grid, the Q·K lesson, knock-out
// and the logit lens, all on the built-in model. attnscope's site is served as GitHub Pages serves
// one (tools/bench/pages_host.mjs: ETag, max-age 600, gzip; on loopback, no simulated link), the post
// from a server of its own on another site (localhost against 127.0.0.1). Fresh browser each round.
// Printed per round: when the five were drawn (each figure's page ready and settled, as each noted
// it: an init script), what attnscope's host sent, and how much bigger the browser is (its processes' proportional set size, PSS) than
// over the same post without figures: at its largest until 2 s after they were drawn (sampled every
// 250 ms), 2 s after they were drawn and 8 s after (a post's figures share one core, which stays
// while it serves others; one figure alone lets its core go once idle for 4 s: www/worker_client.js).
//
//   ./build.sh build && node tools/bench/figures.mjs [rounds]     (SITE=<folder>, default dist;
//   COUNT=1 for the post with one figure; REQUESTS=1 counts each file's downloads; DETAIL=1 lists
//   the browser's processes and, for each figure, when its modules had run, its first run was in
//   and it was drawn; CACHE=memory for a context without a disk cache)
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../../tests/e2e/helpers.mjs';
import { startPagesHost } from './pages_host.mjs';
import { DEFAULTS, fragment } from '../../www/state.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROUNDS = Number(process.argv[2] ?? 2);
const SITE = resolve(ROOT, process.env.SITE ?? 'dist');
const HIDE = ['input', 'config', 'tabs', 'prose'];

const ALL = [
  { kind: 'iframe', title: 'One head', state: { view: 'attention', layer: 2, head: 1 }, height: 760 },
  { kind: 'element', title: 'Every head', state: { view: 'grid' }, height: 900 },
  { kind: 'iframe', title: 'Q·K', state: { view: 'lessons', lesson: 'qk' }, height: 900 },
  { kind: 'element', title: 'Knock-out', state: { view: 'ablate' }, height: 900 },
  { kind: 'iframe', title: 'Logit lens', state: { view: 'lens' }, height: 700 },
];
// COUNT=1: the post with its first figure only, what one figure costs.
const FIGURES = ALL.slice(0, Number(process.env.COUNT ?? ALL.length));

async function post(site, withFigures) {
  const parts = [];
  for (const f of FIGURES) {
    const frag = await fragment({ ...DEFAULTS, model: { kind: 'builtin' }, hide: HIDE, ...f.state }, { embed: true });
    parts.push('<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>');
    if (!withFigures) continue;
    if (f.kind === 'iframe') parts.push(`<iframe src="${site}index.html#${frag}" title="${f.title}" width="700" height="${f.height}" style="border:0;max-width:100%" loading="lazy"></iframe>`);
    else parts.push(`<attn-scope state="${frag.replace(/&embed=1/, '')}" width="700" style="display:block;height:${f.height}px" label="${f.title}"><a href="${site}#${frag}">${f.title}</a></attn-scope>`);
  }
  const script = withFigures ? `<script src="${site}element.js"></script>` : '';
  return `<!doctype html><meta charset="utf-8"><title>A post</title>${script}<body style="max-width:700px;margin:0 auto;font:16px/1.5 serif">${parts.join('\n')}</body>`;
}

function postServer(pages) {
  const server = createServer((req, res) => {
    const body = pages[new URL(req.url, 'http://x').pathname];
    res.writeHead(body ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(body ?? '');
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ url: `http://localhost:${server.address().port}/`, close: () => server.close() })));
}

// The proportional set size of every process whose command line names `profile`, in MB (Linux /proc).
// DETAIL=1 prints each process's type and PSS.
function pssOf(profile, detail = Boolean(process.env.DETAIL)) {
  let kb = 0;
  const each = [];
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmdline.includes(profile)) continue;
      const own = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
      kb += own;
      each.push(`${/--type=([\w-]+)/.exec(cmdline)?.[1] ?? 'browser'} ${(own / 1024).toFixed(0)}`);
    } catch {
      // gone
    }
  }
  if (detail) console.log(each.join(', '));
  return kb / 1024;
}

async function visit(host, posts, withFigures) {
  // A profile folder of its own names the browser's processes (their command lines carry it).
  const profile = await mkdtemp(join(tmpdir(), 'attnscope-figures-'));
  // CACHE=memory: a context without a disk cache (Playwright's default), whose in-memory HTTP cache
  // keeps no large file; its processes are not told apart, so no sizes are printed.
  const memory = process.env.CACHE === 'memory';
  const browser = memory ? await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }) : null;
  const context = memory ? await browser.newContext({ viewport: { width: 760, height: 6000 } }) : await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 760, height: 6000 } });
  const page = context.pages()[0] ?? (await context.newPage());
  // Each figure notes, in its own page, when it was first drawn: ready and settled (its clock is
  // this machine's, as Date.now() here). Read after, rather than timed by this loop's polling, which
  // waits on the main thread the figures share.
  // DETAIL=1 also prints when each figure's page had run its modules (window.attnscope there) and
  // had its model and first run (phase 'ready'), to see which part of the start the figures share.
  await context.addInitScript((origin) => {
    if (location.origin !== origin) return;
    const now = () => performance.timeOrigin + performance.now();
    const marks = (window.attnscopeMarks = {});
    const poll = setInterval(() => {
      if (window.attnscope && !marks.modules) marks.modules = now();
      if (window.attnscope?.app.phase !== 'ready') return;
      clearInterval(poll);
      marks.ready = now();
      window.attnscope.settled().then(() => (window.attnscopeDrawnAt = now()));
    }, 25);
  }, new URL(host.url).origin);
  host.reset();
  const t0 = Date.now();
  // The browser's largest size from the navigation until 2 s after the figures are drawn, sampled every 250 ms.
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, pssOf(profile, false))), 250);
  await page.goto(`${posts.url}${withFigures ? 'five' : 'bare'}`);
  let drawnAt = null;
  const each = new Map(); // frame -> when it was drawn, s after the navigation began
  if (withFigures) {
    for (;;) {
      const frames = page.frames().filter((f) => f.url().startsWith(host.url));
      const ready = await Promise.all(frames.map((f) => f.evaluate(() => (window.attnscopeDrawnAt ? { ...window.attnscopeMarks, drawn: window.attnscopeDrawnAt } : null)).catch(() => null)));
      frames.forEach((f, i) => ready[i] !== null && each.set(f, Object.fromEntries(Object.entries(ready[i]).map(([k, v]) => [k, (v - t0) / 1000]))));
      if (frames.length === FIGURES.length && ready.every((t) => t !== null)) break;
      if (Date.now() - t0 > 120_000) throw new Error(`after 120 s, ${ready.filter((t) => t !== null).length} of ${frames.length} figures drawn`);
      await new Promise((r) => setTimeout(r, 100));
    }
    drawnAt = Math.max(...[...each.values()].map((m) => m.drawn));
  }
  await page.waitForTimeout(2000);
  clearInterval(sampler);
  const pss = pssOf(profile);
  peak = Math.max(peak, pss);
  // Then as the post sits read: an embed lets its idle core go after 4 s (www/app.js EMBED_IDLE_MS).
  await page.waitForTimeout(6000);
  const idle = pssOf(profile);
  const sent = host.sent() / 1e6;
  const repeated = {};
  for (const r of host.requests()) if (r.bytes > 0) repeated[r.path] = (repeated[r.path] ?? 0) + 1;
  await context.close();
  await browser?.close();
  await rm(profile, { recursive: true, force: true });
  return { drawnAt, sent, pss, peak, idle, repeated, each: [...each.values()].sort((a, b) => a.drawn - b.drawn) };
}

const host = await startPagesHost(SITE);
const posts = await postServer({ '/five': await post(host.url, true), '/bare': await post(host.url, false) });
console.log(`${FIGURES.length} figures in a post, attnscope from ${SITE.replace(`${ROOT}/`, '')} on ${host.url}, the post on ${posts.url}; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const bare = await visit(host, posts, false);
    const five = await visit(host, posts, true);
    if (process.env.REQUESTS) console.log(JSON.stringify(five.repeated));
    if (process.env.DETAIL) console.log(`each figure (s after the post's navigation): ${five.each.map((m) => `modules ${m.modules.toFixed(2)}, ready ${m.ready.toFixed(2)}, drawn ${m.drawn.toFixed(2)}`).join('; ')}`);
    if (process.env.CACHE === 'memory') console.log(`round ${round}: ${FIGURES.length} drawn at ${five.drawnAt.toFixed(2)} s; host sent ${five.sent.toFixed(2)} MB (a context without a disk cache)`);
    else console.log(`round ${round}: ${FIGURES.length} drawn at ${five.drawnAt.toFixed(2)} s; host sent ${five.sent.toFixed(2)} MB; browser PSS ${five.pss.toFixed(0)} MB, the bare post's ${bare.pss.toFixed(0)} MB: peak +${(five.peak - bare.peak).toFixed(0)} MB; +${(five.pss - bare.pss).toFixed(0)} MB 2 s after; +${(five.idle - bare.idle).toFixed(0)} MB 8 s after`);
  }
} finally {
  await host.close();
  posts.close();
}
console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
