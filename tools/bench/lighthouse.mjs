// Lighthouse 12.2.3 (npm, pinned; it runs on Node 20) on the page as a static host serves it
// (tools/bench/pages_host.mjs: ETag, max-age 600, gzip), desktop and mobile presets, in Debian's
// Chromium. Lighthouse throttles by its own simulation; the host adds none. Lighthouse is installed
// once into ~/.cache/attnscope/lighthouse-12.2.3, outside the project's package.json (CI never needs it).
// Prints each category's score and LCP, CLS and TBT per preset, RUNS times (default 1).
//
//   ./build.sh build && node tools/bench/lighthouse.mjs [runs]        (SITE=<folder>: another copy of www/)
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPagesHost } from './pages_host.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const VERSION = '12.2.3';
const HOME = join(homedir(), '.cache/attnscope', `lighthouse-${VERSION}`);
const BIN = join(HOME, 'node_modules/.bin/lighthouse');
const RUNS = Number(process.argv[2] ?? 1);

if (!existsSync(BIN)) {
  mkdirSync(HOME, { recursive: true });
  execFileSync('npm', ['i', '-E', '--no-audit', '--no-fund', `lighthouse@${VERSION}`], { cwd: HOME, stdio: 'inherit' });
}

const host = await startPagesHost(resolve(ROOT, process.env.SITE ?? 'www'));
const flags = '--headless=new --no-sandbox --disable-background-networking --disable-component-update --disable-sync --no-first-run --disable-quic --disable-dev-shm-usage';
console.log(`Lighthouse ${VERSION} on ${host.url}; load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
try {
  for (let run = 1; run <= RUNS; run++) {
    for (const preset of ['desktop', 'mobile']) {
      const out = join(tmpdir(), `attnscope-lighthouse-${process.pid}-${preset}.json`);
      const args = [host.url, '--quiet', '--output=json', `--output-path=${out}`, `--chrome-flags=${flags}`, '--only-categories=performance,accessibility,best-practices'];
      if (preset === 'desktop') args.push('--preset=desktop');
      // Asynchronously: the host answers from this process.
      await promisify(execFile)(BIN, args, { env: { ...process.env, CHROME_PATH: process.env.CHROMIUM ?? '/usr/bin/chromium' }, maxBuffer: 1 << 26 });
      const report = JSON.parse(readFileSync(out, 'utf8'));
      rmSync(out, { force: true });
      const score = (c) => Math.round((report.categories[c]?.score ?? 0) * 100);
      const audit = (a) => report.audits[a]?.displayValue ?? '?';
      // DETAIL=1: the largest contentful paint's element, and the main thread's long tasks by script.
      if (process.env.DETAIL) {
        const lcp = JSON.stringify(report.audits['largest-contentful-paint-element']?.details ?? null).match(/"selector":"([^"]*)".*?"nodeLabel":"([^"]{0,60})/);
        console.log(`  LCP element: ${lcp?.[1] ?? '?'} "${lcp?.[2] ?? ''}"`);
        for (const task of report.audits['long-tasks']?.details?.items ?? []) console.log(`  long task at ${Math.round(task.startTime)} ms: ${Math.round(task.duration)} ms ${task.url}`);
        for (const item of (report.audits['bootup-time']?.details?.items ?? []).slice(0, 6)) console.log(`  script ${item.url}: ${Math.round(item.total)} ms (evaluation ${Math.round(item.scripting)}, parse ${Math.round(item.scriptParseCompile)})`);
        for (const item of report.audits['mainthread-work-breakdown']?.details?.items ?? []) console.log(`  main thread: ${item.groupLabel ?? item.group}: ${Math.round(item.duration)} ms`);
      }
      console.log(`run ${run} ${preset}: performance ${score('performance')}, accessibility ${score('accessibility')}, best practices ${score('best-practices')}; LCP ${audit('largest-contentful-paint')}, CLS ${audit('cumulative-layout-shift')}, TBT ${audit('total-blocking-time')}, FCP ${audit('first-contentful-paint')}`);
    }
  }
} finally {
  await host.close();
}
console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
