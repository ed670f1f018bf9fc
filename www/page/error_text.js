// A failure in the reader's language. The core's refusals of a checkpoint come with `code` and `args`
// (src/lib.rs `Said`, carried through worker.js and worker_client.js): their sentence is
// strings.js's `core.<code>`, sizes in binary units (the memory budgets' in GiB with two decimals) and counts as running text writes them (format.js grouped: 6,400 in English, 6400 in Chinese). Any other error keeps its
// message.

import { STRINGS, language, t } from '../strings.js';
import { bytes, grouped } from '../parts/format.js';

const SIZES = new Set(['size', 'least', 'most', 'need', 'file', 'weights', 'held', 'described', 'extra', 'trace', 'work', 'lens']);
// Byte counts said as counts (the tokenizer's growth: "its 2,000 bytes into 10,000,000").
// The memory budgets' sentences say GiB with two decimals: the budgets are whole GiB (1.00 GiB, not
// 1.07 GB), in the binary units the rest of the page uses.
const IN_GIB = new Set(['budget', 'runMemory', 'runMemoryModel', 'traceBudget', 'traceBudgetLens', 'configBudget']);
const COUNTS = new Set(['count', 'n', 'layers', 'tokens', 'limit', 'vocab', 'fits', 'from', 'to', 'entries', 'largest', 'last']);

// A GGUF refusal names a part of the file, or a kind of value, in English words ("the value of
// general.name", "a string"); a Chinese sentence says the same in Chinese, and keeps a phrase it does not know.
const GGUF_WORDS_ZH = [
  [/^the magic$/, () => '魔数'],
  [/^the version$/, () => '版本号'],
  [/^the tensor count$/, () => '张量个数'],
  [/^the metadata count$/, () => '元数据条数'],
  [/^metadata key (\d+)$/, (n) => `第 ${n} 个元数据键`],
  [/^the name of tensor (\d+)$/, (n) => `第 ${n} 个张量的名字`],
  [/^the dimension count of (.+)$/, (k) => `${k} 的维数`],
  [/^the dimensions of (.+)$/, (k) => `${k} 的各维大小`],
  [/^the offset of (.+)$/, (k) => `${k} 的偏移`],
  [/^the type of (.+)$/, (k) => `${k} 的类型`],
  [/^the value of (.+)$/, (k) => `${k} 的值`],
  [/^tensors$/, () => '张量'],
  [/^metadata entries$/, () => '元数据条目'],
  [/^(an integer|a whole number)$/, () => '整数'],
  [/^a float$/, () => '浮点数'],
  [/^a number$/, () => '数字'],
  [/^a boolean$/, () => '布尔值'],
  [/^a string$/, () => '字符串'],
  [/^an array$/, () => '数组'],
  [/^an array of strings$/, () => '字符串数组'],
  [/^an array of other things$/, () => '不是字符串的数组'],
  [/^keys of (\d+) and values of (\d+) per head$/, (k, v) => `每个头 ${k} 维的 K 和 ${v} 维的 V`],
  [/^RoPE scaling "(.+)" \(factor (.+)\)$/, (kind, f) => `RoPE 缩放“${kind}”（系数 ${f}）`],
  [/^Llama 3's RoPE frequency factors \(rope_freqs\)$/, () => 'Llama 3 的 RoPE 频率系数（rope_freqs）'],
  [/^RoPE on (\d+) of each head's (\d+) dimensions$/, (n, d) => `只在每个头 ${d} 维中的 ${n} 维上做的 RoPE`],
];
const GGUF_WORDS = new Set(['what', 'kind', 'found']);

function ggufWords(value) {
  if (language() !== 'zh') return value;
  for (const [pattern, say] of GGUF_WORDS_ZH) {
    const m = pattern.exec(value);
    if (m) return say(...m.slice(1));
  }
  return value;
}

export function errorText(err) {
  const key = err?.code && `core.${err.code}`;
  if (!key || !(key in STRINGS.en)) return err?.message ?? String(err);
  const gguf = err.code.startsWith('gguf.');
  const args = {};
  for (const [name, value] of Object.entries(err.args ?? {})) {
    const n = Number(value);
    // A GGUF file's refusals count its bytes exactly, as the reader compares them with the file's size.
    if (gguf && GGUF_WORDS.has(name)) args[name] = ggufWords(value);
    else if (gguf && /^\d+$/.test(value)) args[name] = Number.isSafeInteger(n) ? grouped(n) : BigInt(value).toLocaleString('en-US');
    // patch.tooLong's `most` is a count of tokens, not of bytes.
    else if (SIZES.has(name) && Number.isFinite(n) && err.code !== 'patch.tooLong') args[name] = IN_GIB.has(err.code) ? `${(n / 2 ** 30).toFixed(2)} GiB` : bytes(n);
    // A count past 2^53 (a damaged header's length) is grouped from its digits, not rounded by a double.
    else if ((COUNTS.has(name) || (name === 'value' && err.code === 'config.countTooBig')) && Number.isFinite(n)) args[name] = Number.isSafeInteger(n) || !/^\d+$/.test(value) ? grouped(n) : BigInt(value).toLocaleString('en-US');
    else args[name] = value;
  }
  const others = Number(err.args?.others ?? 0);
  args.more = others > 0 ? t('core.andMore', { n: grouped(others) }) : '';
  const said = t(key, args);
  // A sentence the core did not send every number for (a core older than these strings, cached)
  // would show a bare "{fits}": the core's own message is said instead.
  if (/\{[a-z]+\}/i.test(said)) return err.message ?? said;
  const join = (...parts) => parts.join(language() === 'zh' ? '' : ' ');
  // A number written as a string ("192"): said how to write it.
  // (Only what JSON reads unquoted as the kind asked for: a whole number for a count.)
  const bare = { 'config.notCount': /^"(0|[1-9]\d*)"$/, 'config.notNumber': /^"(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?)"$/ }[err.code]?.exec(err.args?.value ?? '');
  if (bare) return join(said, t('core.config.quoted', { bare: bare[1] }));
  // A checkpoint without its own tokenizer.json was tried with MiniMind's (worker.js).
  return err.args?.minimindTried ? join(said, t('core.minimindTried')) : said;
}
