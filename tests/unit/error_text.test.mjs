// The core's refusals of a checkpoint in the reader's language (www/page/error_text.js): the key and
// the raw numbers the core sends (src/lib.rs `Said`) make the sentence; anything else keeps its message.
import test from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= { documentElement: {} };
const { setLanguage, loadLanguage } = await import('../../www/strings.js');
await loadLanguage('zh'); // fetched as the page does when it shows Chinese
const { errorText } = await import('../../www/page/error_text.js');

const tooSmall = { message: 'bad weights: model.safetensors is 100 bytes, but …', code: 'tooSmall', args: { size: '100', count: '3295000', least: '6590008' } };

test('a coded refusal is said in the page’s language, sizes in binary units', () => {
  setLanguage('en');
  assert.equal(errorText(tooSmall), 'model.safetensors is 100 B, but this config’s weights need at least 6.285 MiB even in f16 or bf16: the file is cut short, or config.json belongs to another model.');
  setLanguage('zh');
  const zh = errorText(tooSmall);
  assert.match(zh, /^model\.safetensors 只有 100 B，而按 config\.json，这个模型的权重即使用 f16 或 bf16 存储也至少需要 6\.285 MiB/);
  assert.doesNotMatch(zh, /bad weights|need at least|\{\w+\}/);
});

test('“and N more” is added only when there are others; the load budget says GiB, whole as it is set', () => {
  setLanguage('en');
  const unexpected = (others) => errorText({ message: 'x', code: 'unexpectedLayer', args: { name: 'model.layers.2.mlp.up_proj.weight', layers: '2', others } });
  assert.equal(unexpected('0'), 'The checkpoint has a tensor past the last layer: model.layers.2.mlp.up_proj.weight (config.json has num_hidden_layers = 2).');
  assert.equal(unexpected('8'), 'The checkpoint has a tensor past the last layer: model.layers.2.mlp.up_proj.weight (config.json has num_hidden_layers = 2), and 8 more.');
  const budget = errorText({ message: 'x', code: 'budget', args: { need: '3300000000', file: '900000000', weights: '900000000', held: '600000000', most: '3221225472' } });
  assert.match(budget, /^This checkpoint needs 3\.07 GiB to load \(its 0\.84 GiB file twice, .* 0\.56 GiB held .*\), more than the 3\.00 GiB/);
});

test('an error without a known code keeps its own message', () => {
  setLanguage('zh');
  assert.equal(errorText(new Error('tokenizer: cannot read tokenizer.json')), 'tokenizer: cannot read tokenizer.json');
  assert.equal(errorText({ message: 'm', code: 'noSuchKey', args: {} }), 'm');
  assert.equal(errorText('plain'), 'plain');
});

test('the induction probe’s refusal is said with its counts', () => {
  const err = { message: 'bad input: the probe needs 32 different tokens but the vocabulary has only 20 ordinary ones', code: 'probeVocab', args: { tokens: '32', count: '20' } };
  setLanguage('zh');
  assert.equal(errorText(err), '探针需要 32 个互不相同的 token，而这个模型的词表里只有 20 个普通 token（特殊 token 不算）。');
  setLanguage('en');
  assert.match(errorText(err), /^the probe needs 32 different tokens, but this model’s vocabulary has only 20 ordinary ones/);
});

test('a tokenizer refused for a checkpoint without its own says MiniMind’s was tried, in the page’s language', () => {
  const err = { message: 'tokenizer: …', code: 'tokenizer.tooBig', args: { count: '6400', vocab: '256', minimindTried: '1' } };
  setLanguage('zh');
  assert.equal(errorText(err), 'tokenizer.json 有 6400 个 token，而模型的词表（config.json 中的 vocab_size）只有 256 个。（这个检查点没有自带 tokenizer.json，所以试用了 MiniMind 的分词器。）');
  setLanguage('en');
  assert.equal(errorText(err), 'tokenizer.json has 6,400 tokens, but the model’s vocabulary (vocab_size in config.json) has only 256. (The checkpoint has no tokenizer.json, so MiniMind’s was tried.)');
});

test('a tokenizer refused for one stray id names that id, not millions of tokens', () => {
  const err = { message: 'tokenizer: …', code: 'tokenizer.idTooBig', args: { entries: '6401', largest: '400000000', vocab: '6400', last: '6399' } };
  setLanguage('en');
  assert.equal(errorText(err), 'tokenizer.json gives one of its 6,401 tokens the id 400,000,000, but the model’s vocabulary (vocab_size in config.json) has only 6,400 ids, 0 to 6,399.');
  setLanguage('zh');
  assert.equal(errorText(err), 'tokenizer.json 的 6401 个 token 里有一个的 id 是 400,000,000，而模型的词表（config.json 中的 vocab_size）只有 6400 个 id（0 到 6399）。');
});

test('a run over the memory budget names the most tokens that fit, in the page’s language', () => {
  const args = { need: '4300000000', weights: '120000000', trace: '900000000', work: '3280000000', most: '3221225472', fits: '1536', tokens: '2100' };
  setLanguage('en');
  assert.match(errorText({ message: 'x', code: 'runMemory', args }), /over the budget of 3\.00 GiB\. The text is 2,100 tokens and at most 1,536 fit: use a shorter text/);
  assert.match(errorText({ message: 'x', code: 'runMemoryModel', args: { ...args, fits: '0' } }), /not even one token fits\. Choose a smaller model\.$/);
  setLanguage('zh');
  assert.match(errorText({ message: 'x', code: 'runMemory', args }), /这段文本有 2100 个 token，最多放得下 1536 个/);
});

test('a count past 2^53 is grouped from its digits, not rounded; a config count too big names the limit', () => {
  setLanguage('en');
  const huge = errorText({ message: 'x', code: 'config.countTooBig', args: { name: 'max_position_embeddings', value: '1000000000000000000', limit: '18446744073709551615' } });
  assert.equal(huge, 'max_position_embeddings is 1,000,000,000,000,000,000, more than the 18,446,744,073,709,551,615 this browser can count: no model is that big.');
  assert.match(errorText({ message: 'x', code: 'config.countAsFloat', args: { name: 'hidden_size', value: '32.0', whole: '32' } }), /^hidden_size is written as 32\.0, with a decimal point; .* \(32\)/);
});

test('a header entry at fault is named, and a trace over its limit says how many tokens fit', () => {
  setLanguage('en');
  const bad = { message: 'x', code: 'unreadable.badTensor', args: { name: 'model.layers.0.mlp.up_proj.weight', why: 'unknown variant `F8`' } };
  assert.equal(errorText(bad), 'The checkpoint is not a readable safetensors file: its header’s entry for tensor model.layers.0.mlp.up_proj.weight is not valid (unknown variant `F8`).');
  const trace = { message: 'x', code: 'traceBudget', args: { need: '1740000000', most: String(2 ** 30), fits: '5860', tokens: '7000' } };
  assert.equal(errorText(trace), 'Recording this run’s tensors needs 1.62 GiB (the limit is 1.00 GiB). The text is 7,000 tokens and at most 5,860 fit: use a shorter text (the attention weights grow with the square of the number of tokens).');
  setLanguage('zh');
  assert.match(errorText(bad), /张量 model\.layers\.0\.mlp\.up_proj\.weight 的记录无效/);
  assert.match(errorText(trace), /这段文本有 7000 个 token，最多只能放下 5860 个/);
  setLanguage('en');
});

test('a sentence missing one of its numbers keeps the core’s own message, never a bare {placeholder}', () => {
  setLanguage('en');
  const stale = { message: 'recording this trace needs 1.74 GB (the limit is 1.07 GB)', code: 'traceBudget', args: { need: '1740000000', most: String(2 ** 30) } };
  assert.equal(errorText(stale), 'recording this trace needs 1.74 GB (the limit is 1.07 GB)');
});

test('a config number written as a string says to drop the quotes; NaN in config.json is named', () => {
  setLanguage('en');
  assert.equal(errorText({ message: 'x', code: 'config.notCount', args: { name: 'hidden_size', value: '"192"' } }), 'hidden_size must be a whole number (a count, such as 8), not "192". Write it without the quotes: 192.');
  assert.equal(errorText({ message: 'x', code: 'config.notCount', args: { name: 'hidden_size', value: '"big"' } }), 'hidden_size must be a whole number (a count, such as 8), not "big".');
  // Only what JSON reads unquoted as the kind asked for: no advice that would fail again.
  for (const value of ['"8.5"', '"-2"', '"007"', '"+5"']) assert.doesNotMatch(errorText({ message: 'x', code: 'config.notCount', args: { name: 'hidden_size', value } }), /without the quotes/, value);
  for (const value of ['"1.2.3"', '".5"', '"5."']) assert.doesNotMatch(errorText({ message: 'x', code: 'config.notNumber', args: { name: 'rope_theta', value } }), /without the quotes/, value);
  assert.equal(errorText({ message: 'x', code: 'config.notNumber', args: { name: 'rope_theta', value: '"1e6"' } }), 'rope_theta must be a number, not "1e6". Write it without the quotes: 1e6.');
  assert.match(errorText({ message: 'x', code: 'config.notJsonNaN', args: { value: 'NaN', line: '1', column: '194', why: 'expected value' } }), /^config\.json is not valid JSON: NaN at line 1, column 194 is not a JSON number \(Python’s json\.dump writes it/);
  setLanguage('zh');
  assert.equal(errorText({ message: 'x', code: 'config.notCount', args: { name: 'hidden_size', value: '"192"' } }), 'hidden_size 必须是一个整数（一个数目，例如 8），不能是 "192"。去掉引号，写成 192。');
  setLanguage('en');
});

// Every refusal the core can send by name (`said("key", …)` and `Said { key: "…" }` in src/) has its
// sentence in both languages, with the placeholders the core fills: a new refusal without one fails here.
test('every refusal the core names in src/ has its sentence in English and Chinese, with the arguments the core sends', async () => {
  const { readFile, readdir } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const src = new URL('../../src/', import.meta.url).pathname;
  const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.rs'));
  const refusals = new Map(); // key -> the argument names the core sends with it (null: not read here)
  for (const file of files) {
    const text = await readFile(join(src, file), 'utf8');
    for (const m of text.matchAll(/said\(\s*"([\w.]+)",\s*vec!\[/g)) {
      // The vec![…] of (name, value) pairs, brackets matched (a value may index: data[at]).
      let depth = 1;
      let end = m.index + m[0].length;
      for (; depth > 0 && end < text.length; end++) depth += { '[': 1, ']': -1 }[text[end]] ?? 0;
      const args = [...text.slice(m.index + m[0].length, end).matchAll(/\("(\w+)",/g)].map((a) => a[1]);
      refusals.set(m[1], [...(refusals.get(m[1]) ?? []), ...args]);
    }
    for (const m of text.matchAll(/said\(\s*"([\w.]+)"/g)) if (!refusals.has(m[1])) refusals.set(m[1], null);
    for (const m of text.matchAll(/key: "(\w+)"/g)) if (!refusals.has(m[1])) refusals.set(m[1], null);
  }
  const { STRINGS } = await import('../../www/strings.js');
  assert.ok([...refusals.keys()].filter((k) => k.startsWith('gguf.')).length >= 25, 'the GGUF refusals are read');
  for (const [key, sent] of refusals) {
    for (const lang of ['en', 'zh']) {
      const sentence = STRINGS[lang][`core.${key}`];
      assert.ok(sentence, `core.${key} has no ${lang} sentence`);
      // Each placeholder is one the core sends (a sentence may leave out an argument it does not need).
      if (sent) for (const [, name] of sentence.matchAll(/\{(\w+)\}/g)) assert.ok(sent.includes(name) || name === 'more', `core.${key} (${lang}) says {${name}}, which the core does not send`);
    }
  }
});

test('a damaged GGUF file is said in the page’s language, its byte counts exact and the part of the file named in Chinese too', () => {
  const truncated = { message: 'x', code: 'gguf.truncated', args: { what: 'the value of tokenizer.ggml.merges', at: '28736', size: '28736' } };
  setLanguage('en');
  assert.equal(errorText(truncated), 'The GGUF file ends inside its header: the value of tokenizer.ggml.merges at byte 28,736 runs past the end of the file (28,736 bytes). The file is cut short, or it is not a GGUF file.');
  setLanguage('zh');
  assert.equal(errorText(truncated), 'GGUF 文件在文件头中间就结束了：tokenizer.ggml.merges 的值（从第 28736 字节开始）超出了文件末尾（文件共 28736 字节）。文件被截断了，或者它不是 GGUF 文件。');
  assert.equal(errorText({ message: 'x', code: 'gguf.keyKind', args: { key: 'llama.block_count', kind: 'a whole number', found: 'a string' } }), 'GGUF 文件的元数据键 llama.block_count 存的是字符串，而不是整数。');
  assert.equal(errorText({ message: 'x', code: 'gguf.notGguf', args: {} }), '这不是 GGUF 文件：它的开头不是 GGUF 的魔数“GGUF”。');
  setLanguage('en');
  assert.equal(errorText({ message: 'x', code: 'gguf.tensorType', args: { name: 'blk.0.attn_q.weight', type: 'IQ2_XS', supported: 'F32, F16' } }), 'Tensor blk.0.attn_q.weight of the GGUF file is stored as IQ2_XS, which attnscope does not read; it reads these: F32, F16.');
});
