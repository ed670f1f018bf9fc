// The end-to-end tests' comparison with a reference (tests/e2e/tolerance.mjs), in node: the built-in
// model's fixture trace against itself passes; one small entry moved by half of what the rule before per-entry checks
// allowed (2e-4 of the tensor's largest |ref|) is caught and named, though the old rule lets it pass;
// NaN and a -inf on one side only fail; and its numbers are tests/common's for the wasm32 build.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { assertClose, closeness, WASM_VS_PYTORCH } from '../e2e/tolerance.mjs';

// The f32 tensors of a safetensors file by name.
function readTrace(url) {
  const bytes = readFileSync(url);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const tensors = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, data_offsets: [from, to] } = entry;
    assert.equal(dtype, 'F32');
    tensors[name] = Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset + 8 + n + from, bytes.byteOffset + 8 + n + to)));
  }
  return tensors;
}

const TRACE = readTrace(new URL('../fixtures/builtin/trace.safetensors', import.meta.url));
const finite = (v) => Number.isFinite(v) && v > -1e8;
const largest = (values) => values.reduce((m, v) => (finite(v) ? Math.max(m, Math.abs(v)) : m), 0);

test('a fixture’s tensors pass against themselves', () => {
  for (const [name, values] of Object.entries(TRACE)) assert.equal(closeness(WASM_VS_PYTORCH, name, values, values).ratio, 0, name);
});

test('one small entry beside large ones, moved within the old rule, is caught and named', () => {
  const [name, values] = Object.entries(TRACE).reduce((a, b) => (largest(b[1]) > largest(a[1]) ? b : a));
  const scale = largest(values);
  let i = values.findIndex(finite);
  values.forEach((v, k) => {
    if (finite(v) && Math.abs(v) < Math.abs(values[i])) i = k;
  });
  const b = values[i];
  const delta = 1e-4 * scale;
  assert.ok(delta > 10 * (WASM_VS_PYTORCH.atol + WASM_VS_PYTORCH.rtol * Math.abs(b)), `${name}: ${delta} is not far past what is allowed at ${b}`);
  const ours = values.slice();
  ours[i] = Math.fround(b + delta);
  const old = ours.reduce((m, a, k) => (finite(values[k]) ? Math.max(m, Math.abs(a - values[k])) : m), 0) / scale;
  assert.ok(old <= 2e-4, `the old rule’s measure is ${old}`);
  assert.throws(() => assertClose(WASM_VS_PYTORCH, name, ours, values), (e) => {
    assert.match(e.message, new RegExp(`^${name.replaceAll('.', '\\.')}: entry ${i} is ${ours[i]}, the reference ${b}: `));
    assert.match(e.message, /allowed \(wasm vs PyTorch: /);
    return true;
  });
});

test('the page is held to tests/common’s WASM_VS_PYTORCH, the same numbers', () => {
  const rust = readFileSync(new URL('../common/mod.rs', import.meta.url), 'utf8');
  const m = /^pub const WASM_VS_PYTORCH: Tolerance = Tolerance \{ name: "([^"]+)", rtol: ([\d.e-]+), atol: ([\d.e-]+), of_largest: ([\d.e-]+) \};$/m.exec(rust);
  assert.ok(m, 'tests/common/mod.rs has no WASM_VS_PYTORCH written on one line');
  assert.deepEqual({ name: m[1], rtol: Number(m[2]), atol: Number(m[3]), ofLargest: Number(m[4]) }, { ...WASM_VS_PYTORCH });
});

test('NaN, and -inf on one side only, fail; -inf on both sides passes', () => {
  assert.throws(() => assertClose(WASM_VS_PYTORCH, 'nan', [1, NaN], [1, 2]), /nan: entry 1 is NaN/);
  assert.throws(() => assertClose(WASM_VS_PYTORCH, 'inf', [1, -Infinity], [1, 2]), /inf: entry 1 is -Infinity/);
  assert.equal(assertClose(WASM_VS_PYTORCH, 'both', [1, -Infinity], [1, -Infinity]).ratio, 0);
  assert.throws(() => assertClose(WASM_VS_PYTORCH, 'length', [1], [1, 2]), /1 entries against the reference’s 2/);
});
