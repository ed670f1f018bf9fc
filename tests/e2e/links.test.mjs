// Links and the reader's language: a link that names no model (#view=grid, #lang=zh, a lesson's
// link) opens the built-in model with its first sample sentence in the link's language (on a site
// without it, the random model, as before); "model=random" names the random one; an old
// format-1 link opens exactly the state it opened before format 2 (the random model, its text);
// a browser whose language is Chinese opens in 简体中文; switching language while a sample
// sentence is shown switches to that sample in the other language, and text the reader typed stays.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULTS, FORMAT1_DEFAULTS, decode } from '../../www/state.js';
import { STRINGS, loadLanguage } from '../../www/strings.js';
import * as format1 from '../unit/format1_oracle.mjs';
import { cleanScreenshot, launch, settled, startServer } from './helpers.mjs';

await loadLanguage('zh'); // the Chinese sentences the page must show (www/strings/zh.js)

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Read from the file, not from the page: the sentences the page must show.
// The sample sentences alone, {en: [text...], zh: [...]} (samples.json also names each one's pattern and head).
const SAMPLES = Object.fromEntries(
  Object.entries(JSON.parse(readFileSync(join(ROOT, 'www', 'models', 'builtin', 'samples.json'), 'utf8'))).map(([lang, list]) => [lang, list.map((s) => s.text)]),
);

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

// A page in a context of its own with the browser's language `locale`, once its model has run.
async function freshPage(hash, locale = 'en-US') {
  const context = await browser.newContext({ locale, viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  page.on('pageerror', (e) => page.consoleErrors.push(e.stack ?? String(e)));
  await page.goto(`${server.url}${hash}`);
  await page.waitForFunction(() => window.attnscope?.app?.source, null, { timeout: 60_000 });
  await settled(page);
  return page;
}

// What is on screen: the model, the language, the text (state, text box, tokens) and the link.
async function shown(page) {
  await page.waitForFunction(async () => (await window.attnscope.link()) === location.href, null, { timeout: 10_000 });
  return page.evaluate(async () => {
    const { app } = window.attnscope;
    return {
      kind: app.source.kind,
      lang: app.state.lang,
      htmlLang: document.documentElement.lang,
      text: app.state.text,
      box: document.getElementById('text').value,
      ids: app.state.tokens.ids,
      // The worker's own tokenization of the text box (after the model's BOS token unless the state
      // turned it off), to hold the chips to.
      expectedIds: (await window.attnscope.call('tokenize', { text: document.getElementById('text').value, bos: app.state.bos && app.model.bos_token_id != null })).ids,
      chips: document.querySelectorAll('.sidebar .chips .chip').length, // the input's chips (a lesson's door has its own)
      tab: document.querySelector('#nav .tab[data-view="grid"]')?.textContent,
      state: window.attnscope.getState(),
      hash: location.hash,
    };
  });
}

// Switches the page's language with its own button and waits for the new text to run.
async function switchLanguage(page) {
  const before = await page.evaluate(() => window.attnscope.app.state.lang);
  await page.click('#lang-switch');
  await page.waitForFunction((b) => window.attnscope.app.state.lang !== b, before);
  await settled(page);
}

function assertTokens(s) {
  assert.ok(s.ids.length > 0, 'the text was tokenized');
  assert.deepEqual(s.ids, s.expectedIds, 'the tokens are those of the text box');
  assert.equal(s.chips, s.ids.length, 'a chip per token');
}

for (const [hash, lang, view] of [
  ['#view=grid', 'en', 'grid'],
  ['#lang=zh', 'zh', DEFAULTS.view],
  ['#view=lessons&lesson=qk', 'en', 'lessons'],
]) {
  test(`${hash} names no model: it opens the built-in model with the ${lang} sample sentence`, async () => {
    const page = await freshPage(hash);
    await page.waitForSelector(`.view-${view}`);
    const s = await shown(page);
    assert.equal(s.kind, 'builtin');
    assert.equal(s.lang, lang);
    assert.equal(s.htmlLang, lang === 'zh' ? 'zh-CN' : 'en');
    assert.equal(s.text, SAMPLES[lang][0]);
    assert.equal(s.box, SAMPLES[lang][0]);
    assertTokens(s);
    assert.deepEqual(s.state.model, { kind: 'builtin' });
    assert.equal(s.state.text, null, 'the link holds "the sample in its language"');
    assert.match(s.hash, /^#s3\.[A-Za-z0-9_-]+$/, 'the address is rewritten as a format-3 link');
    assert.deepEqual((await decode(s.hash)).state, s.state, 'which node decodes to what is shown');
    await cleanScreenshot(page, `links-${view}-${lang}`);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });
}

test('a plain model=random field opens the random model', async () => {
  const page = await freshPage('#view=grid&model=random');
  const s = await shown(page);
  assert.equal(s.kind, 'random');
  assert.equal(s.text, SAMPLES.en[0], 'with the sample sentence: the link names no text');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('on a site without the built-in model, a link that names no model opens the random one, quietly', async () => {
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  await context.route('**/models/builtin/**', (route) => route.fulfill({ status: 404, body: 'not here' }));
  const page = await context.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  await page.goto(`${server.url}#view=grid&lang=zh`);
  await page.waitForFunction(() => window.attnscope?.app?.source, null, { timeout: 60_000 });
  await settled(page);
  const s = await shown(page);
  assert.equal(s.kind, 'random');
  assert.equal(s.lang, 'zh');
  assert.equal(s.box, FORMAT1_DEFAULTS.text, 'no samples: format 1\'s sentence');
  assertTokens(s);
  assert.deepEqual(s.state.model, { kind: 'random' }, 'the address says what is shown');
  assert.equal(await page.locator('.banner').count(), 0, 'the link named no model: nothing to explain');
  assert.ok(page.consoleErrors.every((e) => /404/.test(e)), `only the missing files: ${page.consoleErrors}`);
  await context.close();
});

test('an old format-1 link opens exactly the state it did: the random model, its text, English', async () => {
  for (const [fields, locale] of [
    [{}, 'en-US'],
    [{ view: 'attention', layer: 1, head: 2, text: 'Old links keep their words.' }, 'zh-CN'],
  ]) {
    const link = await format1.encode({ ...format1.DEFAULTS, ...fields });
    assert.match(link, /^s1\./);
    // Format 1 had no lesson edits, induction probe nor interventions: the page reads them as none;
    // nor a BOS token before the text: the page reads it as off; nor sampling settings: the model's own softmax.
    const before = { ...(await format1.decode(link)).state, edits: null, probe: false, ablate: [], compare: null, target: null, bos: false, temperature: 1, topK: 0, topP: 1, draw: 0, scores: null, scoresTau: null, patchTarget: null, patchAgainst: null };
    const page = await freshPage(`#${link}`, locale);
    const s = await shown(page);
    assert.equal(s.kind, 'random');
    assert.equal(s.lang, 'en', `a format-1 link without a language was English, in a ${locale} browser too`);
    assert.equal(s.box, before.text);
    assertTokens(s);
    assert.deepEqual(s.state, before, 'the state the format-1 decoder gives');
    assert.match(s.hash, /^#s3\./, 'rewritten in format 3, meaning the same');
    assert.deepEqual((await decode(s.hash)).state, before);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  }
});

test('a link with a field it cannot open explains it in the reader\'s language, from the first paint', async () => {
  for (const [locale, lang] of [['zh-CN', 'zh'], ['en-US', 'en']]) {
    const page = await freshPage('#view=no-such-view', locale);
    assert.equal((await shown(page)).lang, lang);
    const banner = (await page.locator('.banner-title').innerText()).trim();
    // The view asked for is named, and the one that opened instead.
    assert.equal(banner, STRINGS[lang]['link.viewUnknown'].replace('{view}', 'no-such-view').replace('{opened}', STRINGS[lang]['view.overview']), `${locale}: the banner's sentence`);
    // It lists the names a view goes by, each id with its tab's label.
    assert.match(await page.locator('.banner').innerText(), lang === 'zh' ? /链接用视图的 id 或它的标签名来指定视图：.*主流程（stepper）、注意力图（attention）/ : /A link names a view by its id or by its tab’s label: .*stepper \(Pipeline\), attention \(Attention map\)/);
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  }
  // A step the pipeline does not have is told too, and the pipeline opens at its first step.
  const page = await freshPage('#view=stepper&step=zzz', 'en-US');
  assert.equal((await page.locator('.banner-title').innerText()).trim(), STRINGS.en['link.fields'].replace('{fields}', 'step'));
  assert.equal(await page.evaluate(() => window.attnscope.getState().step), 'embed');
  // The banner follows a change of language, as the rest of the page does.
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.equal((await page.locator('.banner-title').innerText()).trim(), STRINGS.zh['link.fields'].replace('{fields}', '步骤（step）'));
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a damaged link that also writes fields plainly says that those opened, and shows them', async () => {
  const page = await freshPage('#view=grid&view=attention&layer=1&layer=2&s3.AAAA', 'en-US');
  assert.equal((await page.locator('.banner-title').innerText()).trim(), STRINGS.en['link.damagedKept'].replace('{fields}', 'view, layer'));
  const state = await page.evaluate(() => window.attnscope.getState());
  assert.deepEqual([state.view, state.layer], ['attention', 2]);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a damaged link pasted into an open page keeps the reader’s sentence; its banner goes when a good address follows', async () => {
  const page = await freshPage('#view=grid', 'en-US');
  await page.fill('#text', 'My careful sentence about cats');
  await page.waitForFunction(() => window.attnscope.app.state.text === 'My careful sentence about cats');
  await settled(page);
  const link = new URL(await page.evaluate(() => window.attnscope.link())).hash;
  // The link cut short, as a copy can cut it, typed into the same tab's address.
  await page.evaluate((h) => (location.hash = h), `${link.slice(0, 24)}`);
  await page.waitForSelector('.banner-title');
  await settled(page);
  assert.equal((await page.locator('.banner-title').innerText()).trim(), STRINGS.en['link.damagedLive']);
  assert.equal(await page.inputValue('#text'), 'My careful sentence about cats', 'the reader’s text stays');
  assert.equal(await page.evaluate(() => window.attnscope.getState().view), 'grid');
  // The language button keeps the banner (the page made that change) …
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.equal((await page.locator('.banner-title').innerText()).trim(), STRINGS.zh['link.damagedLive']);
  // … an address the reader types that opens as written takes it away: it spoke of another address.
  await page.evaluate(() => (location.hash = 'view=masks&lang=en'));
  await page.waitForFunction(() => window.attnscope.getState().view === 'masks');
  await settled(page);
  assert.equal(await page.locator('.banner').count(), 0);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a browser whose language is Chinese opens in 简体中文 with a Chinese sample, unless the link says otherwise', async () => {
  const page = await freshPage('', 'zh-CN');
  const s = await shown(page);
  assert.equal(s.kind, 'builtin');
  assert.equal(s.lang, 'zh');
  assert.equal(s.htmlLang, 'zh-CN');
  assert.equal(s.tab, STRINGS.zh['view.grid'], 'the tabs are in Chinese');
  assert.equal(s.box, SAMPLES.zh[0]);
  assertTokens(s);
  await cleanScreenshot(page, 'links-zh-CN-browser');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();

  const grid = await freshPage('#view=grid', 'zh-CN');
  assert.equal((await shown(grid)).lang, 'zh', 'a plain link that does not say: the reader\'s language');
  await grid.context().close();
  const english = await freshPage('#view=grid&lang=en', 'zh-CN');
  const e = await shown(english);
  assert.equal(e.lang, 'en');
  assert.equal(e.box, SAMPLES.en[0]);
  await english.context().close();
});

test('switching language on a sample sentence switches the sample; on typed text keeps it', async () => {
  const page = await freshPage('#view=attention');
  await switchLanguage(page);
  let s = await shown(page);
  assert.equal(s.lang, 'zh');
  assert.equal(s.box, SAMPLES.zh[0], 'the first sample, in Chinese');
  assertTokens(s);
  await cleanScreenshot(page, 'links-switched-zh');

  // Another sample, picked under the text box, follows too.
  await page.click(`.sample[data-lang="zh"] >> nth=1`);
  await page.waitForFunction((t) => window.attnscope.app.state.text === t, SAMPLES.zh[1]);
  await settled(page);
  await switchLanguage(page);
  s = await shown(page);
  assert.equal(s.lang, 'en');
  assert.equal(s.box, SAMPLES.en[1], 'the same sample in English');
  assertTokens(s);
  assert.equal(s.state.text, SAMPLES.en[1], 'not the first sample: the link carries it');

  // Text the reader typed is the reader's: it stays.
  const typed = 'My own words stay mine.';
  await page.fill('#text', typed);
  await page.waitForFunction((t) => window.attnscope.app.state.text === t, typed);
  await settled(page);
  await switchLanguage(page);
  s = await shown(page);
  assert.equal(s.lang, 'zh');
  assert.equal(s.box, typed);
  assert.equal(s.text, typed);
  assertTokens(s);
  await cleanScreenshot(page, 'links-typed-zh');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('the address always says what is on screen: after a click on the tab already open, and after a field the model cannot hold', async () => {
  const page = await freshPage(`#view=attention&layer=3&head=2&text=${encodeURIComponent('My own words here')}`);
  const opened = await page.evaluate(() => window.attnscope.getState());
  assert.deepEqual([opened.layer, opened.head, opened.text], [3, 2, 'My own words here']);
  await page.locator('#nav .tab[data-view="attention"]').click();
  await settled(page);
  let now = await shown(page);
  assert.match(now.hash, /^#s3\./, 'the whole link, not the tab’s #view=attention');
  assert.deepEqual([now.state.layer, now.state.head, now.state.text], [3, 2, 'My own words here']);
  // A layer past the built-in model's four is the last one, and the address says so.
  await page.evaluate(() => (location.hash = 'layer=9'));
  await page.waitForFunction(() => location.hash.startsWith('#s3.'), null, { timeout: 10_000 });
  await settled(page);
  now = await shown(page);
  assert.equal(now.state.layer, 3);
  assert.equal((await decode(now.hash)).state.layer, 3);
  // ... and the page says so, rather than clamping in silence.
  // Only the layer is named: the link gave no head (the head shown was the page's own).
  assert.match(await page.locator('.banner').innerText(), /This link asks for layer 9, but this model has 4 layers \(counting from 0\): it opens layer 3\./);
  // A number past any link's range is quoted as asked (not as the link format's 63), said once, and
  // a new link's banner replaces the last one's rather than piling onto it.
  await page.evaluate(() => (location.hash = 'layer=99&head=-4'));
  await page.waitForFunction(() => /layer 99/.test(document.querySelector('.banner')?.innerText ?? ''), null, { timeout: 10_000 });
  await settled(page);
  const banner = await page.locator('.banner').innerText();
  assert.match(banner, /^This link asks for layer 99, head -4, but this model has 4 layers of 8 heads \(counting from 0\): it opens layer 3, head 0\.\s*×$/);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('settled() waits for a navigation whose hashchange has not arrived yet: a tab’s link, and a button that navigates', async () => {
  const page = await freshPage('#view=attention');
  // Both clicks and settled() run in one task, before the browser dispatches the hashchange.
  const after = await page.evaluate(async () => {
    const { app, settled } = window.attnscope;
    document.querySelector('#nav a.tab[data-view="masks"]').click();
    await settled();
    const view = app.state.view;
    document.getElementById('lang-switch').click();
    await settled();
    return { view, lang: app.state.lang, html: document.documentElement.lang };
  });
  assert.equal(after.view, 'masks');
  assert.deepEqual([after.lang, after.html], ['zh', 'zh-CN']);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a tab clicked while a model loads changes the view, not the model: the model loading is the one shown, and the link names it', async () => {
  const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1400, height: 1000 }, serviceWorkers: 'block' });
  // The built-in model's weights are held back until released, so that a click surely lands mid-load.
  let release = () => {};
  let held = null;
  const hold = () => (held = new Promise((resolve) => (release = resolve)));
  let fetched = 0;
  await context.route('**/models/builtin/model.safetensors', async (route) => {
    fetched++;
    await held;
    await route.continue();
  });
  const page = await context.newPage();
  page.consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && page.consoleErrors.push(m.text()));
  page.on('pageerror', (e) => page.consoleErrors.push(e.stack ?? String(e)));

  // The page's first model.
  hold();
  await page.goto(server.url);
  await page.waitForFunction(() => window.attnscope?.app.loading, null, { timeout: 60_000 });
  await page.click('#nav .tab[data-view="attention"]');
  await page.waitForFunction(() => window.attnscope.app.state.view === 'attention');
  release();
  await page.waitForFunction(() => window.attnscope.app.source, null, { timeout: 60_000 });
  await settled(page);
  await page.waitForSelector('.view-attention');
  let s = await shown(page);
  assert.equal(s.kind, 'builtin', 'the model being loaded is the one on screen');
  assert.equal(s.text, SAMPLES.en[0]);
  assertTokens(s);
  // What a copied link or embed is made of (the share panel's getState) names the model on screen.
  assert.deepEqual(s.state.model, { kind: 'builtin' });
  assert.equal(s.state.view, 'attention');
  assert.deepEqual((await decode(s.hash)).state, s.state);
  assert.equal(fetched, 1, 'the click did not start the weights over');
  assert.equal(await page.locator('.banner').count(), 0, 'nothing went wrong to explain');

  // A model chosen in the model panel while another is on screen.
  await page.click('.segment[data-source="random"]');
  await page.waitForFunction(() => window.attnscope.app.source?.kind === 'random');
  await settled(page);
  hold();
  await page.click('.segment[data-source="builtin"]');
  await page.waitForFunction(() => window.attnscope.app.loading);
  await page.click('#nav .tab[data-view="grid"]');
  await page.waitForFunction(() => window.attnscope.app.state.view === 'grid');
  assert.deepEqual(await page.evaluate(() => window.attnscope.getState().model), { kind: 'random' }, 'until it is in, a link names the model on screen');
  release();
  await settled(page);
  await page.waitForSelector('.view-grid');
  s = await shown(page);
  assert.equal(s.kind, 'builtin', 'the model chosen, not the one on screen when the tab was clicked');
  assert.deepEqual(s.state.model, { kind: 'builtin' });
  assert.equal(s.state.view, 'grid');
  assertTokens(s);
  assert.equal(fetched, 2);
  assert.deepEqual(page.consoleErrors, []);
  await context.close();
});
