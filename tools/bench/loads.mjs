// Tier-up across page loads (issue #11: "about one page load in eight ran ~1.8x slower throughout"):
// opens N fresh Chromium instances one after another, each loads attnscope's relaxed-simd build from
// the site tools/bench/ort.mjs assembled (artifacts/bench-ort/site) and times 8 runs of Session.run
// at T = 128 with the default trace. One line per load: the 8 times in ms. A load that stays slow
// after its first runs is one whose hot code V8 did not tier up as usual.
//
//   node tools/bench/ort.mjs 1 && node tools/bench/loads.mjs [loads]
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { launch } from '../../tests/e2e/helpers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LOADS = Number(process.argv[2] ?? 10);
const server = spawn(process.execPath, ['tools/serve.mjs', join(ROOT, 'artifacts/bench-ort/site'), '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((ok) => createInterface({ input: server.stdout }).on('line', (l) => l.match(/http:\/\/\S+/) && ok(l.match(/http:\/\/\S+/)[0])));
console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
try {
  for (let n = 0; n < LOADS; n++) {
    const browser = await launch({ webgpu: false });
    try {
      const page = await browser.newPage();
      await page.goto(new URL('index.html', url).href);
      const ms = await page.evaluate(async () => {
        const core = await import('./pkg-relaxed/attnscope.js');
        await core.default();
        const config = await (await fetch('config.json')).text();
        const s = core.Session.fromCheckpoint(config, new Uint8Array(await (await fetch('model.safetensors')).arrayBuffer()));
        const ids = Array.from({ length: 128 }, (_, i) => (i * 37 + 11) % 6400);
        const times = [];
        for (let r = 0; r < 8; r++) {
          const t0 = performance.now();
          s.run({ ids });
          times.push(Math.round(performance.now() - t0));
        }
        return times;
      });
      console.log(`load ${n + 1}: ${ms.join(' ')}`);
    } finally {
      await browser.close();
    }
  }
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  server.kill();
}
