// attnscope's wasm forward against onnxruntime-web on the same model, in Debian's headless Chromium
// (issue #11): one MiniMind-3-shape layer (tools/bench/export_onnx.py writes it, as safetensors for
// attnscope and as ONNX for onnxruntime-web, with PyTorch's logits), token ids -> logits, one thread.
// In one page: onnxruntime-web (wasm backend, numThreads 1, SIMD), attnscope's relaxed-simd build
// and its plain simd128 build (www/pkg-relaxed, www/pkg), each `Session.run` with the default trace
// as the page runs it, and its threads build (www/pkg-threads) in a Web Worker as the page runs it
// (a pool of navigator.hardwareConcurrency threads, at most 8; the page is cross-origin isolated by
// tools/serve.mjs with ATTNSCOPE_ISOLATION=on), the logits' buffer transferred back. The three take turns in every round (the order rotates), medians per T, GFLOP/s
// counted from the model's shapes, and every engine's logits checked against PyTorch's first.
//
//   /work/pyenv/bin/python tools/bench/export_onnx.py   (once: artifacts/bench-ort/)
//   ./build.sh build && node tools/bench/ort.mjs [rounds]   (prints a Markdown table for BENCHMARKS.md)
//   BASELINE=../other/www/pkg node tools/bench/ort.mjs       (adds another build of the core as 'baseline')
//   BASELINE_THREADS=../other/www/pkg-threads node tools/bench/ort.mjs   (another threads build, 'baseline threads')
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { launch } from '../../tests/e2e/helpers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MODEL = join(ROOT, 'artifacts/bench-ort');
const SITE = join(MODEL, 'site');
const ROUNDS = Number(process.argv[2] ?? 15);
const TS = [128, 512];
const LOAD0 = loadavg().map((x) => x.toFixed(2)).join(' ');
const CFG = JSON.parse(readFileSync(join(MODEL, 'config.json'), 'utf8'));

// Flops of one forward at length t: the matmuls (2 per multiply-add) and attention's two products
// over the causal half counted in full, as both engines compute them.
function gflop(t) {
  const { hidden_size: h, num_attention_heads: nh, num_key_value_heads: nkv, head_dim: d, intermediate_size: i, vocab_size: v } = CFG;
  const linears = h * nh * d + 2 * h * nkv * d + nh * d * h + 3 * h * i + h * v;
  return (2 * t * linears + 2 * 2 * nh * t * t * d) / 1e9;
}

// The site: the two attnscope builds, onnxruntime-web's wasm files and the model, served by
// tools/serve.mjs (the page's own CSP).
rmSync(SITE, { recursive: true, force: true });
mkdirSync(SITE, { recursive: true });
for (const pkg of ['pkg', 'pkg-relaxed', 'pkg-threads']) symlinkSync(join(ROOT, 'www', pkg), join(SITE, pkg));
// BASELINE=<a www/pkg folder of another build> adds that build (say, main's before this change).
if (process.env.BASELINE) symlinkSync(resolve(process.env.BASELINE), join(SITE, 'pkg-baseline'));
// BASELINE_THREADS=<a www/pkg-threads folder of another build> adds that threads build, in its own worker.
if (process.env.BASELINE_THREADS) symlinkSync(resolve(process.env.BASELINE_THREADS), join(SITE, 'pkg-baseline-threads'));
symlinkSync(join(ROOT, 'node_modules/onnxruntime-web/dist'), join(SITE, 'ort'));
for (const f of ['config.json', 'model.safetensors', 'model.onnx', 'reference.json']) copyFileSync(join(MODEL, f), join(SITE, f));
writeFileSync(join(SITE, 'index.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');
// The threads build runs in a worker, as in the page: its calling thread waits on the pool, which a
// page's main thread may not.
writeFileSync(
  join(SITE, 'threads_worker.js'),
  `let s;
onmessage = async ({ data }) => {
  if (data.config) {
    const core = await import(data.pkg);
    await core.default();
    await core.initThreadPool(data.threads);
    s = core.Session.fromCheckpoint(data.config, data.model);
    postMessage({ ready: true });
    return;
  }
  s.run({ ids: data.ids });
  const logits = s.tensor('logits');
  postMessage({ logits }, [logits.buffer]);
};
`,
);

const server = spawn(process.execPath, ['tools/serve.mjs', SITE, '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ATTNSCOPE_ISOLATION: 'on' } });
const url = await new Promise((ok) => createInterface({ input: server.stdout }).on('line', (l) => l.match(/http:\/\/\S+/) && ok(l.match(/http:\/\/\S+/)[0])));
const browser = await launch({ webgpu: false });
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(new URL('index.html', url).href);
  const result = await page.evaluate(
    async ({ TS, ROUNDS, BASELINE, BASELINE_THREADS }) => {
      const ids = (t) => Array.from({ length: t }, (_, i) => (i * 37 + 11) % 6400); // export_onnx.bench_ids
      const bytes = async (f) => new Uint8Array(await (await fetch(f)).arrayBuffer());
      const config = await (await fetch('config.json')).text();
      const reference = await (await fetch('reference.json')).json();
      const ort = await import('./ort/ort.wasm.min.mjs');
      ort.env.wasm.numThreads = 1;
      ort.env.wasm.wasmPaths = new URL('./ort/', location.href).href;
      const onnx = await ort.InferenceSession.create(await bytes('model.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
      const engines = { onnxruntime: async (t) => (await onnx.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids(t), BigInt), [t]) })).logits.data };
      const model = await bytes('model.safetensors');
      const builds = [['attnscope relaxed-simd', './pkg-relaxed/attnscope.js'], ['attnscope simd128', './pkg/attnscope.js']];
      if (BASELINE) builds.push(['baseline', './pkg-baseline/attnscope.js']);
      for (const [name, pkg] of builds) {
        const core = await import(pkg);
        await core.default();
        const s = core.Session.fromCheckpoint(config, model);
        engines[name] = async (t) => {
          s.run({ ids: ids(t) });
          return s.tensor('logits');
        };
      }
      const threads = Math.min(navigator.hardwareConcurrency, 8);
      if (!crossOriginIsolated) throw new Error('the bench page is not cross-origin isolated: no threads build');
      const threadBuilds = [['attnscope threads', './pkg-threads/attnscope.js']];
      if (BASELINE_THREADS) threadBuilds.push(['baseline threads', './pkg-baseline-threads/attnscope.js']);
      for (const [name, pkg] of threadBuilds) {
        const worker = new Worker('./threads_worker.js', { type: 'module' });
        const answer = () => new Promise((ok, fail) => {
          worker.onmessage = ({ data }) => ok(data);
          worker.onerror = (e) => fail(new Error(`threads worker: ${e.message}`));
        });
        const started = answer();
        worker.postMessage({ config, model: model.slice(), threads, pkg });
        await started;
        engines[`${name} (${threads})`] = async (t) => {
          const got = answer();
          worker.postMessage({ ids: ids(t) });
          return (await got).logits;
        };
      }
      const names = Object.keys(engines);
      const out = { times: {}, maxDiff: {} };
      for (const t of TS) {
        out.times[t] = Object.fromEntries(names.map((n) => [n, []]));
        const want = reference[t];
        let scale = 0;
        for (const x of want) scale = Math.max(scale, Math.abs(x));
        for (const n of names) {
          const got = await engines[n](t); // warm-up, and the logits checked
          let worst = 0;
          for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
          out.maxDiff[`${n} T=${t}`] = worst / scale;
        }
        for (let r = 0; r < ROUNDS; r++) {
          for (let j = 0; j < names.length; j++) {
            const n = names[(r + j) % names.length];
            const t0 = performance.now();
            await engines[n](t);
            out.times[t][n].push(performance.now() - t0);
          }
        }
      }
      return out;
    },
    { TS, ROUNDS, BASELINE: Boolean(process.env.BASELINE), BASELINE_THREADS: Boolean(process.env.BASELINE_THREADS) },
  );
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  console.log(`Chromium ${browser.version()}, ${ROUNDS} rounds, load average before/after: ${LOAD0} / ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
  console.log('| T | engine | median ms | GFLOP/s | speed vs onnxruntime-web | logits vs PyTorch (max abs / max abs ref) |');
  console.log('|---|---|---|---|---|---|');
  for (const t of TS) {
    const base = median(result.times[t].onnxruntime);
    for (const [n, ms] of Object.entries(result.times[t])) {
      const m = median(ms);
      console.log(`| ${t} (${gflop(t).toFixed(1)} GFLOP) | ${n} | ${m.toFixed(1)} | ${(gflop(t) / (m / 1e3)).toFixed(1)} | ${(base / m).toFixed(2)}x | ${result.maxDiff[`${n} T=${t}`].toExponential(1)} |`);
    }
  }
  if (errors.length) console.log('page errors:', errors);
} finally {
  await browser.close();
  server.kill();
}
