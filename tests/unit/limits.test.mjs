// The page's limits (www/limits.js) are the core's (src/model/config.rs's MAX_* consts): the same
// names, the same values. config.rs is read as text with a strict pattern, so a const written in a
// form this test cannot read fails here rather than being skipped; and www/state.js, which clamps a
// link's config, still exports MAX_TOKENS from the same module.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as LIMITS from '../../www/limits.js';
import { MAX_TOKENS } from '../../www/state.js';

const CONFIG_RS = new URL('../../src/model/config.rs', import.meta.url);

// `pub const MAX_NAME: usize = 262_144;` or `pub const MAX_NAME: u64 = 2 << 30;`, alone on its line.
const CONST = /^pub const (MAX_[A-Z_]+): (usize|u64) = (\d[\d_]*)(?: << (\d+))?;$/;

// Every `pub const MAX_*` of a config.rs text, as BigInts by name; throws on one it cannot read.
function rustLimits(source) {
  const limits = {};
  for (const line of source.split('\n')) {
    if (!/^\s*pub const MAX_/.test(line)) continue;
    const m = CONST.exec(line.trim() === line ? line : '');
    if (!m) throw new Error(`config.rs: cannot read ${JSON.stringify(line)} (expected \`pub const MAX_X: usize = 123;\` or \`= 2 << 30;\`)`);
    const [, name, , value, shift] = m;
    if (name in limits) throw new Error(`config.rs: ${name} twice`);
    limits[name] = BigInt(value.replaceAll('_', '')) << BigInt(shift ?? 0);
  }
  return limits;
}

// Differences between a config.rs text and a limits module, one line each; none when they agree.
function differences(source, module) {
  const rust = rustLimits(source);
  const js = Object.fromEntries(Object.entries(module).filter(([name]) => name.startsWith('MAX_')));
  const out = [];
  for (const [name, value] of Object.entries(rust)) {
    if (!(name in js)) out.push(`${name} is ${value} in config.rs and missing from www/limits.js`);
    else if (!Number.isSafeInteger(js[name]) || BigInt(js[name]) !== value) out.push(`${name} is ${value} in config.rs, ${js[name]} in www/limits.js`);
  }
  for (const name of Object.keys(js)) if (!(name in rust)) out.push(`${name} is in www/limits.js, not in config.rs`);
  return out;
}

const source = readFileSync(CONFIG_RS, 'utf8');

test('www/limits.js holds exactly config.rs’s MAX_* consts, with the same values', () => {
  const rust = rustLimits(source);
  // The limits the brief names, so a pattern that matched nothing cannot pass.
  for (const name of ['MAX_HIDDEN', 'MAX_LAYERS', 'MAX_HEADS', 'MAX_HEAD_DIM', 'MAX_INTERMEDIATE', 'MAX_EXPERTS', 'MAX_VOCAB', 'MAX_TOKENS', 'MAX_WEIGHT_BYTES']) {
    assert.ok(name in rust, `config.rs has no readable ${name}`);
  }
  assert.deepEqual(differences(source, LIMITS), []);
});

test('either side changed alone fails', () => {
  // config.rs changed, limits.js not.
  const rustChanged = source.replace(/^pub const MAX_TOKENS: usize = [^;]+;$/m, 'pub const MAX_TOKENS: usize = 4096;');
  assert.notEqual(rustChanged, source);
  assert.deepEqual(differences(rustChanged, LIMITS), [`MAX_TOKENS is 4096 in config.rs, ${LIMITS.MAX_TOKENS} in www/limits.js`]);
  const shifted = source.replace(/^pub const MAX_WEIGHT_BYTES: u64 = [^;]+;$/m, 'pub const MAX_WEIGHT_BYTES: u64 = 1 << 30;');
  assert.deepEqual(differences(shifted, LIMITS), [`MAX_WEIGHT_BYTES is 1073741824 in config.rs, ${LIMITS.MAX_WEIGHT_BYTES} in www/limits.js`]);
  // limits.js changed, config.rs not.
  assert.deepEqual(differences(source, { ...LIMITS, MAX_VOCAB: 65_536 }), [`MAX_VOCAB is 262144 in config.rs, 65536 in www/limits.js`]);
  const { MAX_EXPERTS, ...withoutExperts } = LIMITS;
  assert.equal(MAX_EXPERTS, 256);
  assert.deepEqual(differences(source, withoutExperts), ['MAX_EXPERTS is 256 in config.rs and missing from www/limits.js']);
  assert.deepEqual(differences(source, { ...LIMITS, MAX_CONTEXT: 1 << 20 }), ['MAX_CONTEXT is in www/limits.js, not in config.rs']);
  // A new limit in config.rs alone.
  const added = source.replace(/^pub const MAX_TOKENS: usize = [^;]+;$/m, (line) => `${line}\npub const MAX_KV_HEADS: usize = 64;`);
  assert.deepEqual(differences(added, LIMITS), ['MAX_KV_HEADS is 64 in config.rs and missing from www/limits.js']);
});

test('a MAX_* const config.rs writes in a form the pattern does not know is an error, not a skip', () => {
  for (const line of ['pub const MAX_TOKENS: usize = 8 * 1024;', 'pub const MAX_TOKENS: usize = SOMETHING;', '    pub const MAX_TOKENS: usize = 8192;', 'pub const MAX_TOKENS: usize = 8192; // tokens']) {
    const changed = source.replace(/^pub const MAX_TOKENS: usize = [^;]+;$/m, line);
    assert.throws(() => rustLimits(changed), /cannot read/, line);
  }
});

test('www/state.js exports the same MAX_TOKENS', () => {
  assert.equal(MAX_TOKENS, LIMITS.MAX_TOKENS);
});
