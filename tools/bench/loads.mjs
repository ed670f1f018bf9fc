// Tier-up across page loads (issue #11: "about one page load in eight ran ~1.8x slower throughout"):
// opens N fresh Chromium instances one after another; each loads attnscope's relaxed-simd build and
// onnxruntime-web from the site tools/bench/ort.mjs assembled (artifacts/bench-ort/site) and times
// 8 rounds at T = 128, attnscope's Session.run (default trace) and onnxruntime-web's run taking
// turns. One line per load: attnscope's 8 times, onnxruntime-web's 8 times (ms), and the ratio of
// their medians over rounds 3 to 8. A load where attnscope stays slow while onnxruntime-web does not
// is one whose hot code V8 did not tier up as usual; both slow together is the machine.
//
//   node tools/bench/ort.mjs 1 && node tools/bench/loads.mjs [loads]
//   JS_FLAGS='--no-liftoff' node tools/bench/loads.mjs 20     (V8 flags for every load)
//   PKG=pkg-baseline node tools/bench/loads.mjs              (another build in the site)
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { launch } from '../../tests/e2e/helpers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LOADS = Number(process.argv[2] ?? 10);
const PKG = process.env.PKG ?? 'pkg-relaxed';
// WARMUP=1: the core's warmUp() (what the page's worker calls once the core has loaded) before the model is built.
const WARMUP = process.env.WARMUP === '1';
const extra = process.env.JS_FLAGS ? [`--js-flags=${process.env.JS_FLAGS}`] : [];
const server = spawn(process.execPath, ['tools/serve.mjs', join(ROOT, 'artifacts/bench-ort/site'), '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((ok) => createInterface({ input: server.stdout }).on('line', (l) => l.match(/http:\/\/\S+/) && ok(l.match(/http:\/\/\S+/)[0])));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')}; V8 flags: ${process.env.JS_FLAGS ?? 'none'}; ${PKG}`);
const ratios = [];
try {
  for (let n = 0; n < LOADS; n++) {
    const browser = await launch({ webgpu: false, extra });
    try {
      const page = await browser.newPage();
      await page.goto(new URL('index.html', url).href);
      const { ours, theirs, warm } = await page.evaluate(async ([pkg, warmup]) => {
        const ids = Array.from({ length: 128 }, (_, i) => (i * 37 + 11) % 6400);
        const bytes = async (f) => new Uint8Array(await (await fetch(f)).arrayBuffer());
        const core = await import(`./${pkg}/attnscope.js`);
        await core.default();
        let warm = null;
        if (warmup) {
          const t0 = performance.now();
          core.warmUp();
          warm = Math.round(performance.now() - t0);
        }
        const s = core.Session.fromCheckpoint(await (await fetch('config.json')).text(), await bytes('model.safetensors'));
        const ort = await import('./ort/ort.wasm.min.mjs');
        ort.env.wasm.numThreads = 1;
        ort.env.wasm.wasmPaths = new URL('./ort/', location.href).href;
        const onnx = await ort.InferenceSession.create(await bytes('model.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
        const input = { ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) };
        const ours = [];
        const theirs = [];
        for (let r = 0; r < 8; r++) {
          let t0 = performance.now();
          s.run({ ids });
          s.tensor('logits');
          ours.push(Math.round(performance.now() - t0));
          t0 = performance.now();
          (await onnx.run(input)).logits.data;
          theirs.push(Math.round(performance.now() - t0));
        }
        return { ours, theirs, warm };
      }, [PKG, WARMUP]);
      const ratio = median(ours.slice(2)) / median(theirs.slice(2));
      ratios.push(ratio);
      console.log(`load ${String(n + 1).padStart(2)}: attnscope ${ours.join(' ')} | onnxruntime-web ${theirs.join(' ')} | attnscope / ort ${ratio.toFixed(2)}${warm === null ? '' : ` | warm-up ${warm} ms`}`);
    } finally {
      await browser.close();
    }
  }
  ratios.sort((a, b) => a - b);
  console.log(`attnscope / onnxruntime-web time per load: min ${ratios[0].toFixed(2)}, median ${median(ratios).toFixed(2)}, max ${ratios.at(-1).toFixed(2)}`);
  console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
} finally {
  server.kill();
}
