// Five figures in one blog post, as a blog author makes them: a 700 px post on another site with
// five attnscope figures taken as the Share panel writes them (three <iframe>s, two <attn-scope>
// elements, the hide flags set): one head's attention map, the head grid, the Q·K lesson, knock-out
// and the logit lens, all on the built-in model. attnscope's site is served as GitHub Pages serves
// one (tools/bench/pages_host.mjs: ETag, max-age 600, gzip; on loopback, no simulated link), the post
// from a server of its own on another site (localhost against 127.0.0.1). A fresh browser for each
// visit, started (its own start-up over) before the post opens, as a reader's is.
// Printed per round: when the five were drawn (each figure's page ready and settled, as each noted
// it: an init script) and the CPU time every process spent until then, what attnscope's host sent,
// and how much bigger the browser is (its processes' proportional set size, PSS) than over the same
// post without figures: at its largest until 2 s after they were drawn (sampled every 250 ms), 2 s
// after they were drawn and 8 s after (a post's figures share one core, which stays while it serves
// others; one figure alone lets its core go once idle for 4 s: www/worker_client.js). The sizes come
// from visits of their own: sampling them costs CPU on the cores the figures load on, so the visit
// that is timed does not.
//
//   ./build.sh build && node tools/bench/figures.mjs [rounds]     (SITE=<folder>, default dist;
//   COUNT=1 for the post with one figure; REQUESTS=1 counts each file's downloads; DETAIL=1 lists
//   the browser's processes, their CPU time by thread, and for each figure when its modules had
//   run, its first run was in and it was drawn; TRACE=<file> writes a Chrome trace of the timed
//   visit; CACHE=memory for a context without a disk cache)
import { createServer } from 'node:http';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
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

// The browser's processes: those whose command line names `profile` (Linux /proc), with each one's
// type (renderer, gpu-process, ...; the browser process has none).
function processesOf(profile) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(profile)) found.push({ pid, type: /--type=([\w-]+)/.exec(cmdline)?.[1] ?? 'browser' });
    } catch {
      // gone
    }
  }
  return found;
}

// The CPU seconds (user and system) a /proc stat file says, and the name of its process or thread.
function cpuStat(path) {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), s: (Number(fields[11]) + Number(fields[12])) / 100 };
}

// The proportional set size of the browser's processes, in MB. DETAIL=1 prints each one's type and PSS.
function pssOf(profile, detail = Boolean(process.env.DETAIL)) {
  let kb = 0;
  const each = [];
  for (const { pid, type } of processesOf(profile)) {
    try {
      const own = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
      kb += own;
      each.push(`${type} ${(own / 1024).toFixed(0)}`);
    } catch {
      // gone
    }
  }
  if (detail) console.log(each.join(', '));
  return kb / 1024;
}

// The CPU seconds the browser's processes have used; `each` gets pid -> {type, s, threads}
// (threads: CPU s by thread name, with DETAIL=1).
function cpuOf(profile, each = null) {
  let total = 0;
  for (const { pid, type } of processesOf(profile)) {
    try {
      const { s: own } = cpuStat(`/proc/${pid}/stat`);
      total += own;
      const threads = {};
      if (each && process.env.DETAIL) {
        for (const task of readdirSync(`/proc/${pid}/task`)) {
          try {
            const { name, s: used } = cpuStat(`/proc/${pid}/task/${task}/stat`);
            const kind = name.replace(/\d+$/, '#'); // a pool's threads together
            threads[kind] = (threads[kind] ?? 0) + used;
          } catch {
            // gone
          }
        }
      }
      each?.set(pid, { type, s: own, threads });
    } catch {
      // gone
    }
  }
  return total;
}

// Waits until a freshly started browser has finished starting (its own UI pages preloaded): under
// 0.05 CPU s in 0.5 s, or 10 s.
async function browserStarted(profile) {
  const t0 = Date.now();
  let before = cpuOf(profile);
  while (Date.now() - t0 < 10_000) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpuOf(profile);
    if (now - before < 0.05) return;
    before = now;
  }
}

// One visit of the post in a fresh browser. `sample`: the browser's size is sampled every 250 ms
// from the navigation on, for its peak (reading every process's smaps_rollup costs this process about
// 40 ms of CPU each time, on the two cores the figures load on: a timed visit does not sample).
async function visit(host, posts, withFigures, { sample }) {
  // A profile folder of its own names the browser's processes (their command lines carry it).
  const profile = await mkdtemp(join(tmpdir(), 'attnscope-figures-'));
  // CACHE=memory: a context without a disk cache (Playwright's default), whose in-memory HTTP cache
  // keeps no large file; its processes are not told apart, so no sizes are printed.
  const memory = process.env.CACHE === 'memory';
  const browser = memory ? await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }) : null;
  const context = memory ? await browser.newContext({ viewport: { width: 760, height: 6000 } }) : await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport: { width: 760, height: 6000 } });
  const page = context.pages()[0] ?? (await context.newPage());
  // A reader's browser is running before the post is opened: its own start (Chromium preloads its
  // omnibox's WebUI page, a second of CPU) is over before the navigation.
  // (CACHE=memory's browser has no profile folder of ours to tell its processes by: not waited for.)
  if (!memory) await browserStarted(profile);
  // Each figure notes, in its own page, when it was first drawn: ready and settled (its clock is
  // this machine's, as Date.now() here). Read after, rather than timed by this loop's polling, which
  // waits on the main thread the figures share.
  // DETAIL=1 also prints when each figure's page had run its modules (window.attnscope there) and
  // had its model and first run (phase 'ready'), to see which part of the start the figures share;
  // and the marks a worker.js patched to post them on BroadcastChannel('marks') sent ({k, t}).
  await context.addInitScript((origin) => {
    if (location.origin !== origin) return;
    const now = () => performance.timeOrigin + performance.now();
    const marks = (window.attnscopeMarks = {});
    if (typeof BroadcastChannel === 'function') new BroadcastChannel('marks').onmessage = ({ data }) => (window.coreMarks ??= []).push(data);
    const poll = setInterval(() => {
      if (window.attnscope && !marks.modules) marks.modules = now();
      if (window.attnscope?.app.phase !== 'ready') return;
      clearInterval(poll);
      marks.ready = now();
      marks.view = window.attnscope.getState().view;
      window.attnscope.settled().then(() => (window.attnscopeDrawnAt = now()));
    }, 25);
  }, new URL(host.url).origin);
  host.reset();
  let peak = 0;
  const sampler = sample ? setInterval(() => (peak = Math.max(peak, pssOf(profile, false))), 250) : 0;
  // TRACE=<file>: a Chrome trace of the five figures' visit, from the navigation until drawn.
  let cdp = null;
  const traced = [];
  if (process.env.TRACE && withFigures && !sample) {
    cdp = await context.newCDPSession(page);
    cdp.on('Tracing.dataCollected', (e) => traced.push(...e.value));
    await cdp.send('Tracing.start', { categories: 'devtools.timeline,v8,blink,loading,toplevel,disabled-by-default-devtools.timeline', transferMode: 'ReportEvents' });
  }
  const cpuBefore = new Map();
  cpuOf(profile, cpuBefore);
  const nodeBefore = process.cpuUsage();
  const t0 = Date.now();
  await page.goto(`${posts.url}${withFigures ? 'five' : 'bare'}`);
  let drawnAt = null;
  let cpu = null; // CPU s from the navigation until drawn, by process type; node: the host, the post and this bench
  const each = new Map(); // frame -> when it was drawn, s after the navigation began
  if (withFigures) {
    for (;;) {
      const frames = page.frames().filter((f) => f.url().startsWith(host.url));
      const ready = await Promise.all(frames.map((f) => f.evaluate(() => (window.attnscopeDrawnAt ? { ...window.attnscopeMarks, drawn: window.attnscopeDrawnAt } : null)).catch(() => null)));
      frames.forEach((f, i) => ready[i] !== null && each.set(f, Object.fromEntries(Object.entries(ready[i]).map(([k, v]) => [k, typeof v === 'number' ? (v - t0) / 1000 : v]))));
      if (frames.length === FIGURES.length && ready.every((t) => t !== null)) break;
      if (Date.now() - t0 > 120_000) throw new Error(`after 120 s, ${ready.filter((t) => t !== null).length} of ${frames.length} figures drawn`);
      await new Promise((r) => setTimeout(r, 250));
    }
    drawnAt = Math.max(...[...each.values()].map((m) => m.drawn));
    const cpuAfter = new Map();
    cpuOf(profile, cpuAfter);
    const nodeUsed = process.cpuUsage(nodeBefore);
    cpu = { node: (nodeUsed.user + nodeUsed.system) / 1e6 };
    for (const [pid, { type, s: used }] of cpuAfter) cpu[type] = (cpu[type] ?? 0) + used - (cpuBefore.get(pid)?.s ?? 0);
    if (process.env.DETAIL && !sample) {
      for (const [pid, { type, threads }] of cpuAfter) {
        const was = cpuBefore.get(pid)?.threads ?? {};
        const list = Object.entries(threads).map(([k, v]) => [k, v - (was[k] ?? 0)]).filter(([, v]) => v >= 0.05).sort((a, b) => b[1] - a[1]);
        if (list.length) console.log(`  ${type} ${pid}, CPU s by thread: ${list.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
      }
      const marks = await page.frames().find((f) => f.url().startsWith(host.url))?.evaluate(() => window.coreMarks ?? []);
      if (marks?.length) console.log(`  core's marks: ${marks.map((m) => `${m.k} ${((m.t - t0) / 1000).toFixed(2)}`).join(', ')}`);
    }
    if (cdp) {
      const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
      await cdp.send('Tracing.end');
      await done;
      writeFileSync(process.env.TRACE, JSON.stringify({ traceEvents: traced }));
    }
  }
  let pss = null;
  let idle = null;
  if (sample || !withFigures) {
    await page.waitForTimeout(2000);
    clearInterval(sampler);
    pss = pssOf(profile);
    peak = Math.max(peak, pss);
    // Then as the post sits read: an embed lets its idle core go after 4 s (www/app.js EMBED_IDLE_MS).
    await page.waitForTimeout(6000);
    idle = pssOf(profile);
  }
  const sent = host.sent() / 1e6;
  const repeated = {};
  for (const r of host.requests()) if (r.bytes > 0) repeated[r.path] = (repeated[r.path] ?? 0) + 1;
  await context.close();
  await browser?.close();
  await rm(profile, { recursive: true, force: true });
  return { drawnAt, cpu, sent, pss, peak, idle, repeated, each: [...each.values()].sort((a, b) => a.drawn - b.drawn) };
}

const host = await startPagesHost(SITE);
const posts = await postServer({ '/five': await post(host.url, true), '/bare': await post(host.url, false) });
console.log(`${FIGURES.length} figures in a post, attnscope from ${SITE.replace(`${ROOT}/`, '')} on ${host.url}, the post on ${posts.url}; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
try {
  for (let round = 1; round <= ROUNDS; round++) {
    // Sizes from a visit that samples them; the time and the CPU from one that does not.
    const memory = process.env.CACHE !== 'memory';
    const bare = memory ? await visit(host, posts, false, { sample: true }) : null;
    const sized = memory ? await visit(host, posts, true, { sample: true }) : null;
    const five = await visit(host, posts, true, { sample: false });
    if (process.env.REQUESTS) console.log(JSON.stringify(five.repeated));
    if (process.env.DETAIL) console.log(`  each figure (s after the post's navigation): ${five.each.map((m) => `${m.view}: modules ${m.modules.toFixed(2)}, ready ${m.ready.toFixed(2)}, drawn ${m.drawn.toFixed(2)}`).join('; ')}`);
    const cpu = `CPU s until drawn ${Object.values(five.cpu).reduce((a, b) => a + b, 0).toFixed(2)} (${Object.entries(five.cpu).filter(([, v]) => v >= 0.005).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')})`;
    if (!memory) console.log(`round ${round}: ${FIGURES.length} drawn at ${five.drawnAt.toFixed(2)} s; host sent ${five.sent.toFixed(2)} MB (a context without a disk cache)`);
    else console.log(`round ${round}: ${FIGURES.length} drawn at ${five.drawnAt.toFixed(2)} s; ${cpu}; host sent ${five.sent.toFixed(2)} MB; browser PSS ${sized.pss.toFixed(0)} MB, the bare post's ${bare.pss.toFixed(0)} MB: peak +${(sized.peak - bare.peak).toFixed(0)} MB; +${(sized.pss - bare.pss).toFixed(0)} MB 2 s after; +${(sized.idle - bare.idle).toFixed(0)} MB 8 s after`);
  }
} finally {
  await host.close();
  posts.close();
}
console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
