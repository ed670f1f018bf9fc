// The core's refusals of a checkpoint in the reader's language (www/page/error_text.js): the key and
// the raw numbers the core sends (src/lib.rs `Said`) make the sentence; anything else keeps its message.
import test from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= { documentElement: {} };
const { setLanguage } = await import('../../www/strings.js');
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

test('“and N more” is added only when there are others; the load budget keeps its GB', () => {
  setLanguage('en');
  const unexpected = (others) => errorText({ message: 'x', code: 'unexpectedLayer', args: { name: 'model.layers.2.mlp.up_proj.weight', layers: '2', others } });
  assert.equal(unexpected('0'), 'The checkpoint has a tensor past the last layer: model.layers.2.mlp.up_proj.weight (config.json has num_hidden_layers = 2).');
  assert.equal(unexpected('8'), 'The checkpoint has a tensor past the last layer: model.layers.2.mlp.up_proj.weight (config.json has num_hidden_layers = 2), and 8 more.');
  const budget = errorText({ message: 'x', code: 'budget', args: { need: '3300000000', file: '900000000', weights: '900000000', held: '600000000', most: '3221225472' } });
  assert.match(budget, /^This checkpoint needs 3\.30 GB to load \(its 0\.90 GB file twice, .* 0\.60 GB held .*\), more than the 3\.22 GB/);
});

test('an error without a known code keeps its own message', () => {
  setLanguage('zh');
  assert.equal(errorText(new Error('tokenizer: cannot read tokenizer.json')), 'tokenizer: cannot read tokenizer.json');
  assert.equal(errorText({ message: 'm', code: 'noSuchKey', args: {} }), 'm');
  assert.equal(errorText('plain'), 'plain');
});
