// The input's BOS token: with the built-in model (its config.json names bos_token_id) every input
// starts with <|im_start|>, as MiniMind's training texts do, drawn as a special token and run by the
// model as its first token; the reader may turn it off, and the link then says so; a link made
// before format 3 opens without it; a model whose config names no BOS offers no option.
// Screenshots: artifacts/screenshots/bos-input-en.png and bos-input-zh.png.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { cleanScreenshot, openPage, serverAndBrowser, settled } from './helpers.mjs';

// The built-in model's own config, read here and not through the page.
const CONFIG = JSON.parse(await readFile(new URL('../../www/models/builtin/config.json', import.meta.url), 'utf8'));
const BOS = CONFIG.bos_token_id;
const TEXT = 'The cat sat on the mat because it was tired.';

const env = serverAndBrowser();

async function open(hash) {
  const page = await openPage(env.browser, `${env.server.url}${hash}`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await page.waitForFunction(() => window.attnscope?.app?.state.tokens.ids.length > 0);
  await settled(page);
  return page;
}

// A link payload as a page of format `version` wrote it: deflate-raw JSON after "sN.".
async function payload(fields, version) {
  const stream = new Blob([new TextEncoder().encode(JSON.stringify(fields))]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return `s${version}.${Buffer.from(await new Response(stream).arrayBuffer()).toString('base64url')}`;
}

// The fields a page's link holds.
async function linkFields(page) {
  const href = await page.evaluate(() => window.attnscope.link());
  const part = new URL(href).hash.slice(1).split('&').find((p) => /^s\d+\./.test(p));
  const stream = new Blob([Buffer.from(part.replace(/^s\d+\./, ''), 'base64url')]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
  return { version: Number(/^s(\d+)/.exec(part)[1]), fields: JSON.parse(await new Response(stream).text()) };
}

// What the page shows and ran: its tokens, the chips, the option, and the text's ids without BOS
// asked of the worker on their own.
async function read(page) {
  return page.evaluate(async () => {
    const { app } = window.attnscope;
    const option = document.querySelector('.bos-option');
    return {
      ids: app.state.tokens.ids,
      special: app.state.tokens.special,
      textIds: (await window.attnscope.call('tokenize', { text: app.state.text })).ids,
      chips: [...document.querySelectorAll('.sidebar .chips .chip')].map((c) => ({ text: c.querySelector('.chip-piece').textContent, special: c.classList.contains('special') })),
      offered: Boolean(option) && !option.hidden && !document.querySelector('#bos').disabled,
      shown: Boolean(option) && !option.hidden,
      hint: document.querySelector('#bos-hint')?.textContent ?? '',
      checked: document.querySelector('#bos')?.checked ?? null,
      configBos: app.model.bos_token_id ?? null,
      state: window.attnscope.getState(),
    };
  });
}

// The run's first embedding row is the BOS token's: the same row as a run of BOS alone.
async function firstRowIsBos(page) {
  return page.evaluate(async (bos) => {
    const H = window.attnscope.app.model.hidden_size;
    const run = await window.attnscope.tensor('embed');
    const alone = await window.attnscope.tensor('embed', { ids: [bos], attention_mask: null });
    return run.slice(0, H).every((v, i) => v === alone[i]);
  }, BOS);
}

test('the built-in model reads BOS first by default, drawn as a special token', async () => {
  assert.equal(typeof BOS, 'number', 'the built-in config names bos_token_id');
  const page = await open(`#view=overview&lang=en&text=${encodeURIComponent(TEXT)}`);
  const r = await read(page);
  assert.equal(r.configBos, BOS, "the core read the config's bos_token_id");
  assert.equal(r.ids[0], BOS);
  assert.deepEqual(r.ids.slice(1), r.textIds, 'then the text as the tokenizer reads it alone');
  assert.ok(await firstRowIsBos(page), 'the model ran BOS as its first token');
  assert.deepEqual(r.special, r.ids.map((_, i) => i === 0));
  assert.deepEqual(r.chips[0], { text: '<|im_start|>', special: true });
  assert.ok(r.chips.slice(1).every((c) => !c.special));
  assert.equal(r.chips.length, r.ids.length);
  assert.ok(r.offered && r.checked, 'the option is shown, ticked');
  assert.equal(r.state.bos, true);
  const link = await linkFields(page);
  assert.equal(link.version, 3);
  assert.equal('bos' in link.fields, false, 'on is the default: the link does not say it');
  const overviewFirst = await page.locator('.ov-token').first();
  assert.equal(await overviewFirst.textContent(), '<|im_start|>');
  assert.ok(await overviewFirst.evaluate((n) => n.classList.contains('special')), "the overview's token strip draws it as special too");
  // The chip's tooltip says what it is, not its bytes.
  const title = await page.locator('.sidebar .chip').first().getAttribute('title');
  assert.match(title, /special token/);
  assert.doesNotMatch(title, /3C 7C/);
  // The compare view's second sentence starts the same way.
  await page.evaluate(() => (location.hash = 'view=compare'));
  await page.waitForSelector('.view-compare .compare-sentence');
  await settled(page);
  const firstB = page.locator('.compare-sentence').nth(1).locator('.compare-token').first();
  assert.equal(await firstB.textContent(), '<|im_start|>');
  assert.ok(await firstB.evaluate((n) => n.classList.contains('special')));
  await cleanScreenshot(page, 'bos-input-en');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('turning BOS off removes it, and the link says so; turning it on brings it back', async () => {
  const page = await open(`#view=overview&lang=en&text=${encodeURIComponent(TEXT)}`);
  const withBos = await read(page);
  await page.locator('#bos').uncheck();
  await page.waitForFunction((bos) => window.attnscope.app.state.tokens.ids[0] !== bos && !window.attnscope.app.busy, BOS);
  await settled(page);
  const off = await read(page);
  assert.deepEqual(off.ids, withBos.textIds, 'the text alone');
  assert.equal(off.ids.length, withBos.ids.length - 1);
  assert.ok(off.chips.every((c) => !c.special));
  assert.equal(off.checked, false);
  assert.equal(off.state.bos, false);
  assert.equal((await linkFields(page)).fields.bos, false);
  assert.equal(await firstRowIsBos(page), false, 'the run no longer starts with BOS');
  // The link opens the same elsewhere.
  const href = await page.evaluate(() => window.attnscope.link());
  const elsewhere = await open(new URL(href).hash);
  assert.deepEqual((await read(elsewhere)).ids, off.ids);
  assert.equal((await read(elsewhere)).checked, false);
  await elsewhere.close();
  await page.locator('#bos').check();
  await page.waitForFunction((bos) => window.attnscope.app.state.tokens.ids[0] === bos && !window.attnscope.app.busy, BOS);
  await settled(page);
  assert.deepEqual((await read(page)).ids, withBos.ids);
  assert.equal('bos' in (await linkFields(page)).fields, false);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a link made before BOS (format 2) opens exactly as before: no BOS', async () => {
  const old = await payload({ lang: 'en', view: 'overview', text: TEXT }, 2);
  const page = await open(`#${old}`);
  const r = await read(page);
  assert.deepEqual(r.ids, r.textIds, 'the text alone, as format 2 ran it');
  assert.notEqual(r.ids[0], BOS);
  assert.equal(r.state.bos, false);
  assert.ok(r.offered, 'the built-in model still offers it');
  assert.equal(r.checked, false);
  assert.equal((await linkFields(page)).fields.bos, false, 'rewritten as format 3, it keeps BOS off');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a model whose config names no bos_token_id offers no option and reads no BOS', async () => {
  const page = await open(`#model=random&view=overview&lang=en&text=${encodeURIComponent(TEXT)}`);
  const r = await read(page);
  assert.equal(r.configBos, null);
  assert.equal(r.offered, false);
  // The switch stays in sight, off and greyed, and says why this text starts without BOS.
  assert.equal(r.shown, true);
  assert.equal(r.checked, false);
  assert.match(r.hint, /A random model has no config\.json of its own, so no BOS token \(bos_token_id\): its text runs without one/);
  // The sample sentences' tags name the built-in model's heads: said so while another model runs.
  await page.waitForSelector('.samples:not([hidden])');
  assert.match(await page.locator('.samples-hint').innerText(), /These samples are for the built-in model: their tags name its heads/);
  assert.deepEqual(r.ids, r.textIds);
  assert.ok(r.chips.every((c) => !c.special));
  const refused = await page.evaluate(() => window.attnscope.call('tokenize', { text: 'a', bos: true }).then(() => null, (e) => e.message));
  assert.match(refused, /no bos_token_id/, 'the core refuses BOS for it in a sentence');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('Chinese: the option and the BOS chip read in Chinese', async () => {
  const page = await open('#view=overview&lang=zh');
  const r = await read(page);
  assert.equal(r.ids[0], BOS);
  assert.equal(await page.locator('label[for="bos"]').textContent(), '以 <|im_start|>（BOS）开头');
  assert.match(await page.locator('.bos-hint').textContent(), /MiniMind/);
  assert.match(await page.locator('.sidebar .chip').first().getAttribute('title'), /特殊 token/);
  await cleanScreenshot(page, 'bos-input-zh');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// The pipeline's last step quotes the reader's text before the predicted token: BOS, which the page
// put there and the reader never typed, is left out, in both languages.
test('the prediction sentence quotes the text as typed, without the BOS token', async () => {
  for (const [lang, text, sentence] of [
    // Over 40 characters: the last 40 are kept, from where a word starts ("w|as a little" loses "as").
    ['en', TEXT, /^After “…cat sat on the mat because it was tired\.” the model predicts “.+” \(\d+\.\d+%\)\.$/],
    ['en', 'Once upon a time there was a little girl who lived in a village.', /^After “…a little girl who lived in a village\.” the model predicts/],
    ['zh', '小明把苹果给了小红，她很开心。', /^在“小明把苹果给了小红，她很开心。”之后，模型预测下一个 token 是“.+”（概率 \d+\.\d+%）。$/],
  ]) {
    const page = await open(`#view=stepper&step=prediction&lang=${lang}&text=${encodeURIComponent(text)}`);
    await page.waitForSelector('.prediction-sentence');
    const { ids } = await read(page);
    assert.equal(ids[0], BOS, `${lang}: the run starts with BOS`);
    assert.match(await page.locator('.prediction-sentence').innerText(), sentence, lang);
    // A space or a line break among the candidates is explained, and only then.
    const labels = await page.locator('.view-stepper .bar-label').allInnerTexts();
    assert.equal(await page.locator('[data-note="whitespace"]').count(), labels.some((l) => /^[␣↵]+ · id \d+$/.test(l)) ? 1 : 0, `${lang}: ${labels.join(', ')}`);
    await page.close();
  }
});

// Candidates a newcomer cannot decode are explained by what they would do after this token: a piece
// with no space in front goes on the word ("␣fore" + "ver"), and a line break is said to follow a
// finished sentence only where the sentence has finished.
test('the output’s notes fit the token they follow: word endings go on its word; “after a finished sentence” only after one', async () => {
  const text = 'I love you more than words can say, and I will love you forever.';
  const page = await open(`#view=output&query=15&text=${encodeURIComponent(text)}`);
  await page.waitForSelector('.view-output .prediction .bar-label');
  const pieces = await page.evaluate(() => window.attnscope.app.state.tokens.pieces);
  assert.equal(pieces[15], ' fore');
  const labels = (await page.locator('.view-output .prediction .bar-label').allInnerTexts()).map((l) => l.split(' · ')[0]);
  const ends = labels.filter((l) => /^[A-Za-z]+$/.test(l));
  assert.ok(ends.length > 0, labels.join(', '));
  assert.equal(await page.locator('.view-output .prediction [data-note="word-end"]').innerText(), `${ends.map((e) => `“${e}”`).join(', ')}: no ␣ in front, so each would go on the word “␣fore” rather than start a new one (“␣fore” + “${ends[0]}” = “␣fore${ends[0]}”).`);
  for (const [query, finished] of [[13, false], [17, true]]) {
    await page.evaluate((q) => window.attnscope.setState({ ...window.attnscope.getState(), query: q }), query);
    await page.waitForFunction((q) => document.querySelector('.view-output h3')?.textContent.includes(`token ${q} `), query);
    const note = page.locator('.view-output .prediction [data-note="whitespace"]');
    if (await note.count()) assert.equal(/finished sentence/.test(await note.innerText()), finished, `after token ${query}`);
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});
