// Times the matmul kernels of benches/kernels compiled to wasm32 + simd128 (examples/matmul_wasm.rs)
// in Node's V8, the engine Chromium runs them with (a browser may differ a little); prints the same `matmul ...` lines as
// `cargo bench --bench layer -- matmul`. One thread. Kernels take turns in every round; medians.
//
//   cargo build --release --example matmul_wasm --target wasm32-unknown-unknown
//   node tools/bench/matmul_wasm.mjs [target/wasm32-unknown-unknown/release/examples/matmul_wasm.wasm]

import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

// Same order as kernels::KERNELS; the first is the baseline of the ratio.
const KERNELS = ["matrixmultiply", "gemm", "packed"];
const SHAPES = [[768, 768], [768, 2432], [2432, 768], [768, 6400]]; // kernels::SHAPES, checked below
const ROUNDS = 11;

const path = process.argv[2] ?? "target/wasm32-unknown-unknown/release/examples/matmul_wasm.wasm";
const module = new WebAssembly.Module(readFileSync(path));
// The example links the whole attnscope library, so the browser API's wasm-bindgen imports come
// along; nothing here calls them, and each stub says so if something ever does.
const imports = {};
for (const { module: from, name, kind } of WebAssembly.Module.imports(module)) {
  if (kind !== "function") throw new Error(`unexpected ${kind} import ${from}.${name}`);
  (imports[from] ??= {})[name] = () => {
    throw new Error(`${from}.${name} is not available in this benchmark`);
  };
}
const wasm = new WebAssembly.Instance(module, imports).exports;
if (wasm.shape_count() !== SHAPES.length || wasm.kernel_count() !== KERNELS.length) {
  throw new Error("tools/bench/matmul_wasm.mjs is out of step with benches/kernels");
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

console.log(`machine engine=node-${process.version} wasm=simd128`);
for (const t of [128, 1024]) {
  SHAPES.forEach(([k, out], shape) => {
    const flop = wasm.prepare(shape, t);
    const reps = KERNELS.map((_, kernel) => {
      const start = performance.now();
      wasm.run(kernel, 1); // warm-up, and how many calls make a 20 ms sample
      return Math.max(1, Math.ceil(20 / (performance.now() - start)));
    });
    const samples = KERNELS.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      KERNELS.forEach((_, kernel) => {
        const start = performance.now();
        wasm.run(kernel, reps[kernel]);
        samples[kernel].push((performance.now() - start) / 1e3 / reps[kernel]);
      });
    }
    const secs = samples.map(median);
    KERNELS.forEach((name, kernel) => {
      const ms = (secs[kernel] * 1e3).toFixed(3);
      console.log(`matmul-wasm T=${t} in=${k} out=${out} kernel=${name} median_ms=${ms} gflops=${(flop / secs[kernel] / 1e9).toFixed(1)}`);
    });
    KERNELS.slice(1).forEach((name, i) => {
      console.log(`matmul-wasm T=${t} in=${k} out=${out} speedup_${name}_over_${KERNELS[0]}=${(secs[0] / secs[i + 1]).toFixed(2)}`);
    });
  });
}
