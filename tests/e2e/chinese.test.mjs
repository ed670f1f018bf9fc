// Chinese as a Chinese reader meets it: tokens read as the characters they belong to (a character
// cut over several tokens marked 昨¹ 昨², its bytes in the chip's tooltip), never as <E6 98> bytes, on
// the chips and on the heatmaps' axes; CJK axis labels stand upright; links inside the page keep
// lang=zh; and no view shows a Latin word outside the glossary's allowed names (www/glossary.js).
// Screenshots of every view in 简体中文: artifacts/screenshots/zh-<view>.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanScreenshot, launch, openPage, randomModel, settled as pageSettled, startServer } from './helpers.mjs';
import { strayLatin } from '../../www/glossary.js';

// A Chinese sentence among the built-in model's sample candidates (tools/train/head_stats.py) and the tutorials' sentence.
const SAMPLE = '这本书写得非常好，我一口气就看完了。';
const SENTENCES = [SAMPLE, '昨天天气很好', 'Hello 昨天 🙂 world'];
const VIEWS = ['stepper', 'attention', 'grid', 'masks', 'lines', 'qk', 'rope', 'scale', 'gqa', 'decode', 'flash', 'ffn', 'output', 'compare', 'ablate', 'lens', 'attribution', 'circuit', 'patch', 'lessons'];
const CJK = /[\u2e80-\u9fff\uff00-\uffef]/;
const BYTES = /<[0-9A-F]{2}( [0-9A-F]{2})*>/;

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}#view=attention&lang=zh`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const settled = () => pageSettled(page);

async function type(text) {
  await page.fill('#text', text);
  await page.waitForFunction((s) => window.attnscope.app.state.text === s && window.attnscope.app.state.tokens.ids.length > 0, text);
  await settled();
}

// The text the chips read as: a cut character written once, by the token holding its part ¹.
function readBack(pieces) {
  return pieces
    .join('')
    .replace(/(\P{M})([¹²³⁴])/gu, (_, c, part) => (part === '¹' ? c : ''))
    .replace(/␣/g, ' ');
}

test('Chinese tokens read as their characters on the chips, cut characters marked, bytes in the tooltip', async () => {
  for (const text of SENTENCES) {
    await type(text);
    const tokens = await page.evaluate(() => window.attnscope.app.state.tokens);
    const all = await page.locator('.chip .chip-piece').allInnerTexts();
    assert.equal(all.length, tokens.ids.length);
    // The input starts with the built-in model's BOS token, a special chip that holds no text.
    assert.equal(all[0], '<|im_start|>');
    assert.deepEqual(tokens.special, tokens.ids.map((_, i) => i === 0));
    assert.equal(await page.locator('.chip.special').count(), 1);
    const chips = all.slice(1);
    for (const chip of chips) assert.doesNotMatch(chip, BYTES, `${text}: chip ${chip}`);
    assert.equal(readBack(chips), text, `the chips of ${text} read back as ${chips.join('|')}`);
    // The bytes in the tooltips of the text's chips, joined, are the sentence's UTF-8, computed here independently.
    const titles = (await page.locator('.chip').evaluateAll((nodes) => nodes.map((n) => n.title))).slice(1);
    const hex = titles.map((title) => title.match(/字节 ([0-9A-F ]+?)(，|；)/)[1]).join(' ');
    assert.equal(hex, [...new TextEncoder().encode(text)].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' '));
    // A cut character: each of its chips carries its part and names the character in the tooltip.
    tokens.split.slice(1).forEach((cut, i) => {
      assert.equal(/[¹²³⁴]/.test(chips[i]), cut, chips[i]);
      if (cut) assert.match(titles[i], new RegExp(`是“${tokens.chars[i + 1]}”的一部分`));
    });
  }
  // MiniMind's tokenizer cuts 昨 (E6 98 A8) over tokens; the emoji too.
  const cut = await page.evaluate(() => window.attnscope.app.state.tokens.pieces.filter((p) => /[¹²³⁴]/.test(p)));
  assert.ok(cut.some((p) => p.startsWith('🙂')), cut.join(' '));
  assert.equal(await page.locator('.chip.split').count(), cut.length);
  // What the marks mean is said under the chips, not only in a tooltip.
  const first = await page.evaluate(() => {
    const { split, chars } = window.attnscope.app.state.tokens;
    return chars[split.findIndex(Boolean)];
  });
  const parts = cut.filter((p) => p.startsWith(first));
  assert.equal(await page.locator('.chips-split-note').innerText(), `${parts.join(' ')}：词表里没有“${first}”这个字，分词器把它的 ${new TextEncoder().encode(first).length} 个 UTF-8 字节拆进了 ${parts.length} 个 token；右上角的小数字表示这是第几段。`);
  await type('今天天气很好');
  assert.equal(await page.locator('.chips-split-note').isVisible(), false, 'no cut character, no note');
});

test('heatmap axes show characters, never bytes, and CJK labels are never turned on their side', async () => {
  for (const text of ['昨天天气很好', SAMPLE]) {
    await type(text);
    for (const view of ['attention', 'masks', 'qk', 'scale', 'flash', 'gqa']) {
      await page.evaluate((v) => (location.hash = `view=${v}&lang=zh`), view);
      await page.waitForSelector(`.view-${view}`);
      await settled();
      const canvases = await page.locator('canvas.heatmap-canvas').evaluateAll((nodes) => nodes.map((n) => ({ rotated: n.dataset.rotatedLabels, skipped: Number(n.dataset.skippedLabels) })));
      assert.ok(canvases.length > 0, view);
      for (const { rotated } of canvases) assert.doesNotMatch(rotated ?? '', CJK, `${view}: ${rotated}`);
    }
  }
  // Tokens of two characters stand stacked (中 over 国) in the masks' narrow columns: every other
  // column's label is banded, so that the labels' bottom line does not read across as a sentence.
  // Banding needs a stacked label of two lines or more: single characters alone are not banded.
  const banded = async () => page.locator('.view-masks canvas.heatmap-canvas').evaluateAll((nodes) => nodes.map((n) => n.dataset.bandedLabels));
  await type('中国的经济在过去二十年里发展得很快。');
  await page.evaluate(() => (location.hash = 'view=masks&lang=zh'));
  await page.waitForSelector('.view-masks');
  await settled();
  const multi = await page.evaluate(() => window.attnscope.app.state.tokens.pieces.some((p) => [...p].length > 1 && /^[\u4e00-\u9fff]+$/.test(p)));
  assert.ok(multi, 'the sentence has a token of two characters');
  assert.ok((await banded()).includes('true'), 'stacked tokens of two characters are banded');
  await cleanScreenshot(page, 'zh-masks-stacked-banded');
  // Chinese is never set smaller than 10 px to fit a column: in the KV-cache view's columns (about
  // 21 px) 中国 at 8 px was too small to read, so it stands stacked at full size, banded.
  await page.evaluate(() => (location.hash = 'view=decode&lang=zh'));
  await page.waitForSelector('.view-decode');
  await settled();
  const decodeMaps = await page.locator('.view-decode canvas.heatmap-canvas').evaluateAll((nodes) => nodes.map((n) => [n.dataset.shrunkLabels, n.dataset.bandedLabels]));
  assert.ok(decodeMaps.some(([, banded]) => banded === 'true'), `a map stacks 中国, banded: ${decodeMaps}`);
  for (const [shrunk] of decodeMaps) assert.ok(shrunk === 'false' || Number(shrunk) >= 10, `labels set at ${shrunk} px`);
  await page.evaluate(() => (location.hash = 'view=masks&lang=zh'));
  await settled();
  await type('天天天天');
  await settled();
  assert.ok(!(await banded()).includes('true'), 'single characters are not banded');
  // The attention map's axes are labelled by the same pieces as the chips (no bytes), all of them drawn.
  await page.evaluate(() => (location.hash = 'view=attention&lang=zh'));
  await settled();
  const skipped = await page.locator('.view-attention canvas.heatmap-canvas').first().getAttribute('data-skipped-labels');
  assert.equal(skipped, '0');
  await cleanScreenshot(page, 'zh-attention-axes');
});

// A predicted token that holds only the first bytes of a character (the core writes <E6 A3>) is said
// as part of a character, with a note, in the Output view, the overview's prediction and the pipeline.
test('a predicted half character reads as part of a character, never as bare bytes', async () => {
  await type('今天天气很');
  for (const view of ['output', 'overview', 'lens']) {
    await page.evaluate((v) => (location.hash = `view=${v}&lang=zh`), view);
    await page.waitForSelector(`.view-${view}`);
    await settled();
    const text = await page.locator('#view').innerText();
    assert.doesNotMatch(text, BYTES, `${view}: ${text.match(BYTES)?.[0]}`);
  }
  await page.evaluate(() => (location.hash = 'view=output&lang=zh'));
  await settled();
  const text = await page.locator('#view').innerText();
  assert.match(text, /一个字的前几个字节（E6 [0-9A-F]{2}…）/, 'the built-in model puts a half character among its candidates after 今天天气很');
  assert.match(await page.locator('[data-note="part"]').first().innerText(), /模型还要再预测一个 token 才能拼成整个字/);
  await cleanScreenshot(page, 'zh-output-half-character');
});

test('small multiples keep every label: each head of the GQA view is labelled 她 … on both axes', async () => {
  await type('小红很开心，她笑了。');
  await page.evaluate(() => (location.hash = 'view=gqa&lang=zh'));
  await page.waitForSelector('.view-gqa canvas.heatmap-canvas');
  await settled();
  const canvases = await page.locator('.view-gqa canvas.heatmap-canvas').evaluateAll((nodes) => nodes.map((n) => ({ ...n.dataset, width: n.clientWidth })));
  assert.ok(canvases.length >= 4, `${canvases.length} heatmaps`);
  for (const d of canvases) {
    assert.equal(d.skippedLabels, '0', `a ${d.width} px heatmap left labels out`);
    assert.doesNotMatch(d.rotatedLabels, CJK);
  }
  await cleanScreenshot(page, 'zh-gqa-small-multiples');
});

test('links inside the page keep the language', async () => {
  await page.evaluate(() => (location.hash = 'view=lessons&lesson=qk&lang=zh'));
  await page.waitForSelector('.lesson-tab');
  await settled();
  const lessonLinks = await page.locator('.lesson-tab').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('href')));
  const tabLinks = await page.locator('a.tab').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('href')));
  assert.equal(lessonLinks.length, 8);
  for (const href of [...lessonLinks, ...tabLinks]) assert.match(href, /[#&]lang=zh(&|$)/, href);
  // Opened on its own (a middle click), a lesson link opens in Chinese.
  const other = await openPage(browser, `${server.url}${lessonLinks[1]}`);
  await pageSettled(other);
  assert.equal(await other.evaluate(() => window.attnscope.app.state.lang), 'zh');
  assert.equal(await other.evaluate(() => document.documentElement.lang), 'zh-CN');
  assert.match(await other.title(), /[\u4e00-\u9fff]/);
  await other.close();
  // In English the links stay plain.
  await page.evaluate(() => (location.hash = 'view=lessons&lesson=qk&lang=en'));
  await page.waitForFunction(() => document.documentElement.lang === 'en');
  await settled();
  for (const href of await page.locator('.lesson-tab').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('href')))) assert.doesNotMatch(href, /lang=/);
});

// The page's own words on a view: what the reader typed and what the model says (token pieces, sample
// sentences in English) are content, not interface, and are left out.
function interfaceText() {
  // The pipeline's rail names tensors (attn.out, q_norm): code, as in MiniMind's source.
  const content = '.chips, .samples-list [lang="en"], .bar-label, .token-lines text, #text, .matrix-table th, .decode-sequence, .rail-step';
  const clone = document.body.cloneNode(true);
  for (const node of clone.querySelectorAll(content)) node.remove();
  for (const node of clone.querySelectorAll('[hidden], template, script, style')) node.remove();
  document.body.append(clone);
  clone.style.position = 'absolute';
  const text = clone.innerText;
  clone.remove();
  return text;
}

test('every view in 简体中文 has no Latin word outside the glossary', async () => {
  // Lessons keep the sentence box behind their sidebar button: type on a view that shows it.
  await page.evaluate(() => (location.hash = 'view=overview&lang=zh'));
  await page.waitForSelector('.view-overview');
  await settled();
  await type(SAMPLE);
  const stray = {};
  for (const view of VIEWS) {
    await page.evaluate((v) => (location.hash = `view=${v}&lang=zh`), view);
    await page.waitForSelector(`.view-${view}`);
    await settled();
    const text = await page.evaluate(interfaceText);
    const pieces = await page.evaluate(() => window.attnscope.app.state.tokens.pieces);
    const words = strayLatin(text).filter((w) => !pieces.some((p) => p.includes(w)));
    if (words.length) stray[view] = [...new Set(words)].join(' ');
    await cleanScreenshot(page, `zh-${view}`);
  }
  assert.deepEqual(stray, {});
  assert.deepEqual(page.consoleErrors, []);
});

// A view that hands the DOM's own replaceChildren a false or a null prints it as a word: no view, in
// either language, shows a bare null, undefined, false, NaN or [object …].
test('no view prints a bare null, undefined, false or NaN, in English or Chinese', async () => {
  const found = {};
  for (const lang of ['en', 'zh']) {
    for (const view of VIEWS) {
      await page.evaluate(([v, l]) => (location.hash = `view=${v}&lang=${l}`), [view, lang]);
      await page.waitForSelector(`.view-${view}`);
      await settled();
      const text = await page.locator('#view').innerText();
      const bad = text.match(/\b(null|undefined|false|NaN)\b|\[object \w+\]/g);
      if (bad) found[`${lang} ${view}`] = [...new Set(bad)].join(' ');
    }
  }
  assert.deepEqual(found, {});
});

// The core's refusal of a size typed in the model panel reaches the Chinese page in Chinese, under
// the field it names (src/model/config.rs says it with a key and its numbers), and in English again
// after a language switch.
test('a config the core refuses is explained in Chinese under its field', async () => {
  await page.evaluate((hash) => (location.hash = hash), randomModel({ view: 'grid', lang: 'zh' }));
  await page.waitForSelector('.view-grid');
  await settled();
  await page.fill('#cfg-num_key_value_heads', '3');
  await page.press('#cfg-num_key_value_heads', 'Enter');
  const error = page.locator('#cfg-num_key_value_heads-error');
  await error.waitFor({ state: 'visible' });
  const zh = await error.innerText();
  assert.match(zh, /Q 头数 num_attention_heads（4）必须是 KV 头数 num_key_value_heads（3）的整数倍/);
  assert.doesNotMatch(zh, /divisible|must be|bad config/);
  await page.fill('#cfg-num_key_value_heads', '');
  await page.fill('#cfg-hidden_size', '90');
  await page.press('#cfg-hidden_size', 'Enter');
  const hidden = page.locator('#cfg-hidden_size-error');
  await hidden.waitFor({ state: 'visible' });
  assert.match(await hidden.innerText(), /hidden_size（90）不能被 num_attention_heads（4）整除/);
  await page.fill('#cfg-hidden_size', '64');
  await page.fill('#cfg-num_key_value_heads', '2');
  await page.press('#cfg-num_key_value_heads', 'Enter');
  await hidden.waitFor({ state: 'hidden' });
  await settled();
  assert.deepEqual(page.consoleErrors, []);
});

test('on a phone the attention map’s stage control fits: 阶段 on one line, the page no wider than the screen, the stage shown in sight', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const phone = await openPage(context, `${server.url}#view=attention&lang=zh`);
  await pageSettled(phone);
  const fit = await phone.evaluate(() => {
    const label = document.querySelector('.view-attention .picker-label');
    const group = document.querySelector('.view-attention .segmented');
    const box = group.getBoundingClientRect();
    const whole = (b) => b.left >= box.left - 1 && b.right <= box.right + 1;
    const pressed = group.querySelector('[aria-pressed="true"]').getBoundingClientRect();
    return {
      page: document.documentElement.scrollWidth,
      label: label.getBoundingClientRect().height,
      line: parseFloat(getComputedStyle(label).lineHeight) || 20,
      inSight: whole(pressed),
      // Every stage whole, none cut to a character (原始匹配分数 was cut to 数).
      all: [...group.querySelectorAll('.segment')].every((b) => whole(b.getBoundingClientRect()) && b.scrollWidth <= b.clientWidth + 1),
    };
  });
  assert.ok(fit.all, 'all four stages in sight, whole');
  assert.ok(fit.page <= 390, `page width ${fit.page}`);
  assert.ok(fit.label < 1.5 * fit.line, `阶段 on one line: ${fit.label} px`);
  assert.ok(fit.inSight, 'the pressed stage is inside the visible part of its group');
  await context.close();
});

// At 320 px (the narrowest phones) no view pushes the page sideways: a head named by its role in a
// picker, a wide table, each stays in its own box.
test('at 320 px, in Chinese, no view is wider than the screen', async () => {
  const context = await browser.newContext({ viewport: { width: 320, height: 800 } });
  const phone = await openPage(context, `${server.url}#view=attention&lang=zh`);
  await pageSettled(phone);
  const wide = [];
  for (const view of VIEWS) {
    await phone.evaluate((v) => window.attnscope.setState({ view: v }), view);
    await pageSettled(phone);
    const width = await phone.evaluate(() => document.documentElement.scrollWidth);
    if (width > 320) wide.push(`${view} ${width}`);
  }
  assert.deepEqual(wide, []);
  // At 390 px a lesson's 5 × 5 matrices are read whole in their card, not cut mid-column, and code
  // keeps its lines (it scrolls rather than wraps); the padding lesson's lines, each under its own
  // comment, fit the card whole.
  await phone.setViewportSize({ width: 390, height: 800 });
  for (const lesson of ['padding', 'causal']) {
    await phone.evaluate((id) => window.attnscope.setState({ view: 'lessons', lesson: id }), lesson);
    await pageSettled(phone);
    const cut = await phone.$$eval('.lesson table.matrix', (tables) => tables.filter((tb) => tb.getBoundingClientRect().right > tb.closest('.card').getBoundingClientRect().right - 1).length);
    assert.equal(cut, 0, `${lesson}: every matrix inside its card`);
    assert.equal(await phone.$eval('.lesson pre.formula.code', (pre) => getComputedStyle(pre).whiteSpace), 'pre');
    if (lesson === 'padding') assert.ok(await phone.$eval('.lesson pre.formula.code', (pre) => pre.scrollWidth <= pre.clientWidth), 'the padding code is not cut');
  }
  // The KV cache's growth table keeps each header on one line and scrolls sideways instead.
  await phone.evaluate(() => window.attnscope.setState({ view: 'decode' }));
  await pageSettled(phone);
  const heights = await phone.$$eval('.decode-table th', (ths) => ths.map((th) => th.getBoundingClientRect().height / parseFloat(getComputedStyle(th).lineHeight || '20')));
  assert.ok(heights.length > 0 && heights.every((h) => h < 1.9), `one line each: ${heights}`);
  await context.close();
});
