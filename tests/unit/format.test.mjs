// Numbers typed in a field (www/parts/format.js numberList): ASCII or a Chinese keyboard's full-width
// forms, separated by commas or spaces.
import test from 'node:test';
import assert from 'node:assert/strict';

globalThis.document ??= { documentElement: {} };
const { numberList } = await import('../../www/parts/format.js');
await (await import('../../www/strings.js')).loadLanguage('zh'); // fetched as the page does when it shows Chinese

test('full-width digits, commas and signs read as the numbers they are', () => {
  assert.deepEqual(numberList('1, 2, 3'), [1, 2, 3]);
  assert.deepEqual(numberList('１，２，３'), [1, 2, 3]);
  assert.deepEqual(numberList('０．５、－２ −1.5'), [0.5, -2, -1.5]);
  assert.deepEqual(numberList('  4  5 '), [4, 5]);
  assert.ok(numberList('1, x').some(Number.isNaN), 'what is not a number is flagged');
  assert.deepEqual(numberList(''), []);
});

test('one typed number (a lesson’s cell): full-width digits, signs and a Chinese full stop read as ASCII; empty is not a number', async () => {
  const { typedNumber } = await import('../../www/parts/format.js');
  assert.equal(typedNumber('０．５'), 0.5);
  assert.equal(typedNumber('－１'), -1);
  assert.equal(typedNumber('0。5'), 0.5);
  assert.equal(typedNumber(' −2.5 '), -2.5);
  assert.ok(Number.isNaN(typedNumber('')));
  assert.ok(Number.isNaN(typedNumber('  ')));
  assert.ok(Number.isNaN(typedNumber('abc')));
  assert.equal(typedNumber('1e-3'), 0.001);
  assert.equal(typedNumber('.5'), 0.5);
  assert.equal(typedNumber('+3.'), 3);
  for (const other of ['0x10', '0b11', 'Infinity', '1,5', '1.2.3', '--1']) assert.ok(Number.isNaN(typedNumber(other)), other);
});

test('a token in quotation marks: “…”, but a quote mark itself in other marks, so they do not pile up', async () => {
  const { quoted } = await import('../../www/parts/format.js');
  assert.equal(quoted('很'), '“很”');
  assert.equal(quoted('”'), '‘”’', 'English: single marks around a double one');
  assert.equal(quoted('“'), '‘“’');
  const { setLanguage } = await import('../../www/strings.js');
  setLanguage('zh');
  assert.equal(quoted('”'), '「”」', 'Chinese: corner brackets');
  assert.equal(quoted('好'), '“好”');
  setLanguage('en');
});

test('characters that draw nothing or a missing-glyph box are written visibly on chips and axes', async () => {
  const { tokenText, visible, percent, spaced } = await import('../../www/parts/format.js');
  assert.equal(tokenText('a\u0000b'), 'a␀b');
  assert.equal(tokenText('\u001b'), '␛');
  assert.equal(tokenText('\u007f'), '␡');
  assert.equal(tokenText('\u200b¹'), 'U+200B¹', 'a zero-width space cut over two tokens');
  assert.equal(visible('d\u2028e\u202ef'), 'dU+2028eU+202Ef', 'separators and bidi overrides');
  assert.equal(visible('a\u0085b\u009fc'), 'aU+0085bU+009Fc', 'C1 controls (NEL and the rest) draw nothing either');
  assert.equal(tokenText(' the\n'), '␣the↵', 'spaces and newlines as before');
  assert.equal(tokenText('\ufe0f²'), 'U+FE0F²', 'a variation selector alone');
  assert.equal(tokenText('❤\ufe0f'), '❤\ufe0f', 'beside its character it stays');
  assert.equal(tokenText('中国'), '中国');
  // Probabilities without a space before %, and no space after full-width punctuation.
  assert.equal(percent(0.218), '21.8%');
  assert.equal(percent(0.0434), '4.34%');
  assert.equal(percent(0.00005), '0.01%');
  assert.equal(percent(0.0000123), '<0.01%', 'tiny, not impossible');
  assert.equal(percent(0), '0.00%');
  assert.equal(spaced('熵：'), '熵：');
  assert.equal(spaced('Entropy:'), 'Entropy: ');
});

test('a whole number in running text: grouped by thousands in English, plain in Chinese up to 99999', async () => {
  const { grouped } = await import('../../www/parts/format.js');
  const { setLanguage } = await import('../../www/strings.js');
  assert.equal(grouped(6400), '6,400');
  setLanguage('zh');
  assert.equal(grouped(6400), '6400', 'as the rest of the Chinese page writes the vocabulary size');
  assert.equal(grouped(1048576), '1,048,576');
  setLanguage('en');
});

test('a power of ten is written as one (rope_theta 1000000 → 10⁶); other numbers grouped', async () => {
  const { powerOfTen } = await import('../../www/parts/format.js');
  assert.equal(powerOfTen(1e6), '10⁶');
  assert.equal(powerOfTen(10000), '10⁴');
  assert.equal(powerOfTen(1e12), '10¹²');
  assert.equal(powerOfTen(500000), '500,000');
  assert.equal(powerOfTen(10), '10');
});

test('the marks note names only the marks the pieces carry, in the page’s language', async () => {
  const { marksNote } = await import('../../www/parts/format.js');
  const { setLanguage } = await import('../../www/strings.js');
  assert.equal(marksNote(['中国', '的']), '');
  assert.equal(marksNote(['中国', '\n']), '↵ marks a line break.');
  assert.equal(marksNote([' love', 'you', '\t']), '␣ marks a space before a word; ⇥ marks a tab.');
  setLanguage('zh');
  assert.equal(marksNote(['快', '。', '\n']), '↵ 表示换行。');
  setLanguage('en');
});

test('a part of a character is its bytes on an axis, and the marks note says what that is', async () => {
  const { axisLabel, marksNote } = await import('../../www/parts/format.js');
  assert.equal(axisLabel('<E8 97>', 6), '‹E8 97…›');
  assert.equal(axisLabel('<97>', 6), '‹…97›');
  assert.equal(marksNote(['a', '<E8 97>']), '‹E8 97…› is part of a character, some of its UTF-8 bytes (hover for the token).');
});

test('a huge number is written short whatever its sign, so a table cell keeps to its width', async () => {
  const { fixed } = await import('../../www/parts/format.js');
  assert.equal(fixed(3999999983616, 2), '4.0e+12');
  assert.equal(fixed(-3999999983616, 2), '−4.0e+12');
  assert.equal(fixed(-1e9, 2), '−1.0e+9');
  assert.equal(fixed(1234.5, 2), '1234.50');
});

test('a character read across two tokens (扇¹ 扇²) is explained where its marks appear', async () => {
  globalThis.document ??= { documentElement: {} };
  const { setLanguage } = await import('../../www/strings.js');
  const { marksNote } = await import('../../www/parts/format.js');
  setLanguage('zh');
  assert.equal(marksNote(['今天', '扇¹', '扇²']), '扇¹ 扇²：分词器把一个字的 UTF-8 字节拆进了两个 token，小数字表示这是第几段。');
  assert.equal(marksNote(['今天', '天气']), '');
  setLanguage('en');
});

test('a one- or two-letter word-start token that is no English word of its own is taken for a word’s first piece', async () => {
  const { isWordStartPiece } = await import('../../www/parts/prediction.js');
  for (const piece of ['Ġf', 'Ġma', ' b', 'ĠSt']) assert.ok(isWordStartPiece(piece), piece);
  for (const piece of ['Ġa', 'ĠI', 'Ġto', 'ĠOf', 'Ġtime', 'f', 'ma', 'Ġ', 'Ġ1', 'Ġé']) assert.ok(!isWordStartPiece(piece), piece);
});

test('a token of a whole character and part of another writes the part as the part marks do', async () => {
  const { tokenText } = await import('../../www/parts/format.js');
  assert.equal(tokenText('的<E6>'), '的‹E6…›');
  assert.equal(tokenText('<85>的'), '‹…85›的');
  assert.equal(tokenText(' a<E6 A3>'), '␣a‹E6 A3…›');
  assert.equal(tokenText('<b>'), '<b>', 'a tag-like piece is not bytes');
});
