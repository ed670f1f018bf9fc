// Where one build of the core spends a forward (issue #11): Chromium's sampling profiler over
// Session.run on the bench model (the site tools/bench/ort.mjs assembles in artifacts/bench-ort/site),
// self time per function, wasm and JS alike. Runs 3 warm-up forwards, then profiles RUNS more at each
// T. Functions the compiler inlined count in their caller, so read the table with the build's
// inlining in mind.
//
//   node tools/bench/ort.mjs 1 && node tools/bench/profile.mjs [pkg-relaxed|pkg] [runs]
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { launch } from '../../tests/e2e/helpers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PKG = process.argv[2] ?? 'pkg-relaxed';
const RUNS = Number(process.argv[3] ?? 10);
const TS = [128, 512];
const server = spawn(process.execPath, ['tools/serve.mjs', join(ROOT, 'artifacts/bench-ort/site'), '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((ok) => createInterface({ input: server.stdout }).on('line', (l) => l.match(/http:\/\/\S+/) && ok(l.match(/http:\/\/\S+/)[0])));
const browser = await launch({ webgpu: false });
try {
  const page = await browser.newPage();
  await page.goto(new URL('index.html', url).href);
  await page.evaluate(async (pkg) => {
    const core = await import(`./${pkg}/attnscope.js`);
    await core.default();
    const config = await (await fetch('config.json')).text();
    const model = new Uint8Array(await (await fetch('model.safetensors')).arrayBuffer());
    window.bench = core.Session.fromCheckpoint(config, model);
  }, PKG);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  console.log(`${PKG}, ${RUNS} profiled runs per T, load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (const t of TS) {
    const run = (n) =>
      page.evaluate(
        ({ t, n }) => {
          const ids = Array.from({ length: t }, (_, i) => (i * 37 + 11) % 6400);
          const ms = [];
          for (let r = 0; r < n; r++) {
            const t0 = performance.now();
            window.bench.run({ ids });
            window.bench.tensor('logits');
            ms.push(performance.now() - t0);
          }
          return ms;
        },
        { t, n },
      );
    await run(3);
    await cdp.send('Profiler.start');
    const ms = await run(RUNS);
    const { profile } = await cdp.send('Profiler.stop');
    // Self time per node from the samples' time deltas, summed by function name.
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const self = new Map();
    let total = 0;
    profile.samples.forEach((id, i) => {
      const dt = profile.timeDeltas[i] / 1e3;
      const f = byId.get(id).callFrame;
      const name = f.functionName || `(${f.url.split('/').pop() || 'anonymous'})`;
      self.set(name, (self.get(name) ?? 0) + dt);
      total += dt;
    });
    ms.sort((a, b) => a - b);
    console.log(`\nT = ${t}: median run ${ms[ms.length >> 1].toFixed(1)} ms; profiled ${total.toFixed(0)} ms`);
    for (const [name, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
      console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${(v / RUNS).toFixed(1).padStart(7)} ms/run  ${name.slice(0, 110)}`);
    }
  }
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  await browser.close();
  server.kill();
}
