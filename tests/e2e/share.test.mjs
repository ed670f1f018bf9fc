// Sharing, embedding and export, in Chromium under the server's strict Content-Security-Policy:
// a link opens exactly the state it was taken from (same state, same pixels); a bad link opens
// with a banner and the defaults; text from a link is never run as HTML; the embed fits iframes of
// three sizes and hides what its author hid; <attn-scope> works on a plain page of another origin;
// SVG and PNG exports parse and decode at 2x; the page reloads offline from its service worker.
// Screenshots go to artifacts/screenshots/share-*.png.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, symlink, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { launch, randomModel, screenshot, startServer } from './helpers.mjs';
import { DEFAULTS, FORMAT1_DEFAULTS, decode, encode, fragment } from '../../www/state.js';
import EN from '../../www/strings/en.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const VIEWPORT = { width: 1280, height: 900 };
// A blog that embeds attnscope: another origin (127.0.0.1 and its own port; the site is on
// localhost), without our CSP, serving the pages a test puts in `posts`. A real server, since
// Chromium lets only pages from a loopback address load loopback pages.
const posts = new Map();
let blog;
const host = () => `http://127.0.0.1:${blog.address().port}`;

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launch();
  blog = createServer((req, res) => {
    if (req.url === '/favicon.ico') return res.writeHead(204).end();
    const body = posts.get(req.url);
    const type = req.url.endsWith('.js') ? 'text/javascript' : 'text/html';
    res.writeHead(body ? 200 : 404, { 'Content-Type': `${type}; charset=utf-8` }).end(body ?? 'not found');
  });
  await new Promise((resolve) => blog.listen(0, '127.0.0.1', resolve));
});

after(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((resolve) => blog?.close(resolve));
});

// A fresh context and page that record console errors, uncaught exceptions and dialogs.
async function freshPage(url, options = {}) {
  const context = await browser.newContext({ viewport: VIEWPORT, ...options });
  const page = await context.newPage();
  page.consoleErrors = [];
  page.dialogs = [];
  page.on('console', (m) => {
    if (m.type() === 'error') page.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => page.consoleErrors.push(e.stack ?? String(e)));
  page.on('dialog', (d) => {
    page.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  if (url) await page.goto(url);
  return page;
}

function settled(target) {
  return target.waitForFunction(() => window.attnscope?.settled().then(() => true), null, { timeout: 90_000 });
}

// Settled, and the address has stopped changing (the page writes it at most every 250 ms).
async function stableUrl(page) {
  await settled(page);
  let last = page.url();
  let since = Date.now();
  while (Date.now() - since < 700) {
    await new Promise((r) => setTimeout(r, 100));
    if (page.url() !== last) {
      last = page.url();
      since = Date.now();
    }
  }
  return last;
}

const hashOf = (url) => new URL(url).hash;

// The pixels of the view area, from a full-page capture (an element capture would scroll the
// sticky top bar, with its timing, over the view).
async function viewShot(page) {
  await page.evaluate(() => window.scrollTo(0, 0));
  const box = await page.locator('#view').boundingBox();
  return page.screenshot({ fullPage: true, clip: box });
}
const getState = (target) => target.evaluate(() => window.attnscope.getState());

// A hand-made format-1 link (as an old page, or a hand edit of one, wrote it).
async function payload(object) {
  const stream = new Blob([new TextEncoder().encode(JSON.stringify(object))]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return `s1.${Buffer.from(await new Response(stream).arrayBuffer()).toString('base64url')}`;
}

const SHARED = {
  text: 'Attention lets every token look back at the others.',
  config: { hidden_size: 96, num_hidden_layers: 3, num_attention_heads: 6, num_key_value_heads: 2, vocab_size: 6400, rope_theta: 10000 },
  seed: 7,
  pad: [1, 4],
};

test('a link opens exactly its state: the same fields and the same pixels, view by view', async () => {
  const author = await freshPage(`${server.url}`);
  await settled(author);
  const cases = [
    { ...SHARED, view: 'attention', layer: 2, head: 5, stage: 'masked' },
    { view: 'stepper', step: 'rope', layer: 1 },
    { view: 'lines', layer: 0, head: 1, query: 3, allHeads: true },
    { view: 'grid', stage: 'scores', causal: false },
    { view: 'masks', layer: 1, head: 2, pad: [0] },
  ];
  for (const [n, partial] of cases.entries()) {
    const set = await author.evaluate((p) => window.attnscope.setState(p), partial);
    for (const [key, value] of Object.entries(partial)) if (key !== 'config') assert.deepEqual(set[key], value, `${key} was set`);
    const url = await stableUrl(author);
    assert.match(hashOf(url), /^#s3\.[A-Za-z0-9_-]+$/, 'the address holds a format-3 link');
    const state = await getState(author);
    assert.deepEqual((await decode(hashOf(url))).state, state, 'node decodes the page’s link to the page’s state');
    assert.equal(await author.evaluate(() => window.attnscope.link()), url);

    const reader = await freshPage(url);
    await stableUrl(reader);
    assert.deepEqual(await getState(reader), state, 'the reader opens the same state');
    const [a, b] = [await viewShot(author), await viewShot(reader)];
    assert.ok(a.equals(b), `case ${n} (${partial.view}): the reader's view has the author's pixels`);
    if (n === 0) {
      await screenshot(author, 'share-roundtrip-author');
      await screenshot(reader, 'share-roundtrip-reader');
    }
    assert.equal(await reader.locator('.banner').count(), 0, 'a good link raises no banner');
    // A link without the causal mask says so above the view and in the status: it is not how
    // MiniMind runs.
    const off = state.causal === false;
    assert.equal(await reader.locator('.causal-off-note').isVisible(), off, `case ${n}: the causal mask's note`);
    assert.equal((await reader.locator('#status').innerText()).includes('causal mask: off'), off, `case ${n}: the status`);
    assert.deepEqual(reader.consoleErrors, []);
    await reader.context().close();
  }
  assert.deepEqual(author.consoleErrors, []);
  await author.context().close();
});

test('the address follows the reader’s clicks without adding history entries; back and forward restore views', async () => {
  const page = await freshPage(`${server.url}#view=attention`);
  await stableUrl(page);
  const entries = await page.evaluate(() => history.length);
  for (const head of ['1', '2', '3']) {
    await page.selectOption('.view-attention select[name="head"]', head);
    await settled(page);
  }
  await page.locator('.segment[data-stage="scores"]').click();
  await page.locator('.chip[data-index="2"]').click();
  const url = await stableUrl(page);
  assert.equal(await page.evaluate(() => history.length), entries, 'replaceState, not a new entry per change');
  const { state } = await decode(hashOf(url));
  assert.deepEqual([state.view, state.head, state.stage, state.pad], ['attention', 3, 'scores', [2]]);

  await page.locator('.tab[data-view="grid"]').click();
  await page.waitForSelector('.view-grid');
  await stableUrl(page);
  assert.equal((await getState(page)).view, 'grid');
  await page.goBack();
  await page.waitForSelector('.view-attention');
  await stableUrl(page);
  const back = await getState(page);
  assert.deepEqual([back.view, back.head, back.stage, back.pad], ['attention', 3, 'scores', [2]], 'back restores the whole state');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('the scripting API: getState, setState (validated, config merged), link and statechange', async () => {
  const page = await freshPage(server.url);
  await settled(page);
  await page.evaluate(() => {
    window.events = [];
    window.attnscope.addEventListener('statechange', (e) => window.events.push(e.detail));
  });
  const head = (await getState(page)).head;
  const state = await page.evaluate(() => window.attnscope.setState({ view: 'grid', config: { num_attention_heads: 8 }, layer: 1, head: 99, lang: 'fr' }));
  assert.equal(state.view, 'grid');
  assert.deepEqual(state.config, { ...DEFAULTS.config, num_attention_heads: 8 }, 'config merges key by key');
  assert.equal(state.head, head, 'out of range: ignored, the head stays (docs/embedding.md)');
  assert.equal(state.lang, 'en', 'an invalid field keeps its value');
  assert.equal(await page.locator('.head-label').count(), 8);
  const events = await page.evaluate(() => window.events);
  assert.ok(events.length >= 1);
  assert.deepEqual(events.at(-1), state);
  const link = await page.evaluate(() => window.attnscope.link());
  assert.deepEqual((await decode(hashOf(link))).state, state);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// What a format-1 link opens as: its defaults, and no lesson edits, induction probe nor interventions (format 1 had
// no field for them), and no BOS token first (nor had format 2).
const FORMAT1_STATE = { ...FORMAT1_DEFAULTS, edits: null, probe: false, ablate: [], compare: null, target: null, bos: false, temperature: 1, topK: 0, topP: 1, draw: 0, scores: null, scoresTau: null, patchTarget: null, patchAgainst: null };

// defaults: the state the page must fall back to, its link's format's defaults (a damaged format-1
// link opens format 1's: the random model), or null where the link's own fields stay.
const BAD_LINKS = [
  { name: 'damaged', hash: async () => `#${(await encode({ ...DEFAULTS, ...SHARED, view: 'grid' })).slice(0, 40)}`, says: /damaged/, defaults: DEFAULTS },
  { name: 'future', hash: async () => `#${(await encode({ ...DEFAULTS, view: 'grid' })).replace(/^s3\./, 's9.')}`, says: /newer version.*format 9/, defaults: DEFAULTS },
  { name: 'garbage', hash: async () => '#s1.%%%<<>>&&=&embed', says: /damaged/, defaults: FORMAT1_STATE },
  { name: 'too-long', hash: async () => `#s1.${'A'.repeat(40_000)}`, says: /far longer/, defaults: DEFAULTS },
  { name: 'edited', hash: async () => `#${await payload({ view: 'attention', layer: 99, head: 'two', stage: 'sideways' })}`, says: /adjusted or reset: head, stage\.[^]*This link asks for layer 99, but this model has 2 layers \(counting from 0\): it opens layer 1\./, defaults: null },
  { name: 'refused', hash: async () => `#${await payload({ config: { hidden_size: 64, num_attention_heads: 4, num_key_value_heads: 3 } })}`, says: /refused/, defaults: FORMAT1_STATE },
  { name: 'files-model', hash: async () => `#${await payload({ model: { kind: 'files' }, view: 'masks' })}`, says: /load its config\.json and model\.safetensors/, defaults: null },
  // An embed cannot take files: it says where they can be loaded.
  { name: 'embedded-files-model', hash: async () => `#${await payload({ model: { kind: 'files' }, view: 'masks', hide: ['config', 'input'] })}&embed=1`, says: /an embedded view cannot load\. Open it with “Open in attnscope ↗”/, defaults: null },
];

for (const bad of BAD_LINKS) {
  test(`a ${bad.name} link opens with a banner that says so, and a working page`, async () => {
    const page = await freshPage(`${server.url}${await bad.hash()}`);
    const banner = page.locator('.banner[role="alert"]');
    await banner.waitFor();
    await stableUrl(page);
    assert.match(await banner.innerText(), bad.says);
    assert.ok((await page.locator('#view .view-root').count()) > 0, 'a view is drawn');
    const state = await getState(page);
    if (bad.defaults) assert.deepEqual(state, bad.defaults);
    if (bad.name === 'edited') assert.deepEqual([state.view, state.layer, state.head, state.stage], ['attention', 1, 0, 'probs']);
    assert.deepEqual((await decode(hashOf(page.url()))).state, state, 'the address now says what is shown');
    await screenshot(page, `share-bad-link-${bad.name}`);
    await page.locator('.banner-close').click();
    assert.equal(await banner.count(), 0, 'the banner can be dismissed');
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  });
}

const XSS = [
  '<img src=x onerror="window.__xss=1">',
  '<script>window.__xss=1</script>',
  '"><svg onload="window.__xss=1"></svg>',
  "'-alert(1)-'",
  'javascript:window.__xss=1',
  '{{constructor.constructor("window.__xss=1")()}}',
];

test('text from a link is shown as text in every field and view, never run: no script, no dialog', async () => {
  const text = XSS.join(' ');
  const hostile = {
    text,
    lesson: XSS[0],
    view: XSS[1],
    step: XSS[2],
    stage: XSS[0],
    lang: XSS[1],
    backend: XSS[2],
    hide: XSS,
    pad: XSS,
    model: { kind: 'url', url: `https://example.org/${XSS[0]}` },
    config: { [XSS[0]]: 1, hidden_size: XSS[1] },
    [XSS[2]]: XSS[3],
  };
  const plain = `&text=${encodeURIComponent(text)}&view=${encodeURIComponent(XSS[0])}`;
  const cases = { payload: `#${await payload(hostile)}`, plain: `#${plain.slice(1)}`, mixed: `#${await payload({ text })}${plain}` };
  for (const [name, hash] of Object.entries(cases)) {
    const page = await freshPage(null);
    // The link's model URL answers with a config.json the core refuses: the page quotes the URL, no error is logged.
    await page.route('https://example.org/**', (route) => route.fulfill({ status: 200, body: XSS[0], headers: { 'access-control-allow-origin': '*' } }));
    await page.goto(`${server.url}${hash}`);
    await stableUrl(page);
    const state = await getState(page);
    assert.equal(state.text, text, 'the text arrives whole');
    assert.equal(await page.inputValue('#text'), text, 'in the textarea, as a value');
    for (const view of ['stepper', 'attention', 'lines', 'masks', 'grid']) {
      await page.evaluate((v) => window.attnscope.setState({ view: v }), view);
      await settled(page);
    }
    const bannerText = await page.locator('.banner').allInnerTexts();
    if (name === 'payload') assert.match(bannerText.join(' '), /example\.org\/<img src=x onerror="window.__xss=1">/, 'the model URL is quoted as text');
    assert.match(bannerText.join(' '), /adjusted or reset: .*view|asks for the view “<img src=x onerror="window.__xss=1">”/, 'the refused fields are named');
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'no payload ran');
    assert.equal(await page.locator('img[src="x"], svg[onload], #view script, .banner script').count(), 0, 'no payload became an element');
    assert.deepEqual(page.dialogs, []);
    assert.deepEqual(page.consoleErrors, [], 'no CSP violation, no error');
    await screenshot(page, `share-xss-${name}`);
    await page.context().close();
  }
});

// A download's bytes, after clicking the button that starts it.
async function downloadOf(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const dir = join(ROOT, 'artifacts', 'exports');
  await mkdir(dir, { recursive: true });
  const path = join(dir, download.suggestedFilename());
  await download.saveAs(path);
  return { name: download.suggestedFilename(), bytes: await readFile(path) };
}

test('SVG and PNG exports of every view: the SVG parses with real text, the PNG decodes at 2x', async () => {
  const page = await freshPage(`${server.url}#${await fragment({ ...FORMAT1_DEFAULTS, ...SHARED, view: 'attention', layer: 1, head: 3 })}`, { acceptDownloads: true });
  await stableUrl(page);
  for (const view of ['attention', 'stepper', 'grid', 'masks', 'lines', 'lens']) {
    await page.evaluate((v) => window.attnscope.setState({ view: v, step: 'scores' }), view);
    await settled(page);
    const svg = await downloadOf(page, '#export-svg');
    // The name says what the figure shows: its head where it shows one, the stage or step, the language.
    const named = { attention: /^attnscope-attention-l1h3-[a-z]+-en\.svg$/, stepper: /^attnscope-stepper-scores(-l1h3)?-en\.svg$/, grid: /^attnscope-grid-en\.svg$/, masks: /^attnscope-masks-l1h3-en\.svg$/, lines: /^attnscope-lines-l1h3-en\.svg$/, lens: /^attnscope-lens-en\.svg$/ };
    assert.match(svg.name, named[view]);
    const parsed = await page.evaluate((text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      const root = doc.documentElement;
      return {
        error: doc.querySelector('parsererror')?.textContent ?? null,
        root: root.localName,
        ns: root.namespaceURI,
        width: Number(root.getAttribute('width')),
        height: Number(root.getAttribute('height')),
        texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
        images: doc.querySelectorAll('image').length,
        desc: doc.querySelector('desc')?.textContent,
      };
    }, svg.bytes.toString('utf8'));
    assert.equal(parsed.error, null, `${view}: the SVG parses`);
    assert.equal(parsed.root, 'svg');
    assert.equal(parsed.ns, 'http://www.w3.org/2000/svg');
    assert.ok(parsed.width > 100 && parsed.height > 100);
    assert.ok(parsed.texts.some((s) => s.startsWith('attnscope')), 'a title');
    assert.ok(parsed.texts.length > 3, 'labels are real SVG text');
    assert.ok(view === 'lines' || view === 'lens' || parsed.images > 0, 'heatmaps as images');
    // The logit lens's cells are buttons on the page and its layer names stick over them: the
    // figure keeps every visible cell's token and probability, and the layer names.
    if (view === 'lens') {
      const L = await page.evaluate(() => window.attnscope.app.model.num_hidden_layers);
      for (let l = 0; l < L; l++) assert.ok(parsed.texts.includes(`L${l}`), `layer ${l}'s name`);
      assert.ok(parsed.texts.filter((s) => /^\d+(\.\d+)?%$/.test(s)).length >= L * 2, `the cells' probabilities: ${parsed.texts.join(' | ')}`);
    }
    assert.deepEqual((await decode(hashOf(parsed.desc))).state, await getState(page), 'the SVG carries its link');
    if (view === 'attention') assert.ok(parsed.texts.some((s) => s.includes('layers.1.attn.probs[0, 3]')), 'the tensor’s name as text');
    // Under the title, what the figure shows: the head and stage where the view has them, and the sentence.
    const subtitle = parsed.texts[1];
    assert.ok(subtitle.endsWith(`“${(await getState(page)).text.slice(0, 60)}${(await getState(page)).text.length > 60 ? '…' : ''}”`), `${view}: ${subtitle}`);
    if (view === 'attention') assert.match(subtitle, / · layer 1, head 3 · [a-z ·Q]+ · “/);
    if (view === 'grid') assert.doesNotMatch(subtitle, /layer|head/);
    if (view === 'lines') assert.ok(parsed.texts.some((s) => s === 'queries' || s === 'QUERIES'));

    const png = await downloadOf(page, '#export-png');
    assert.ok(png.bytes.subarray(1, 4).toString() === 'PNG', 'a PNG file');
    const size = await page.evaluate(async (b64) => {
      const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
      const bitmap = await createImageBitmap(blob);
      return { width: bitmap.width, height: bitmap.height };
    }, png.bytes.toString('base64'));
    assert.deepEqual(size, { width: parsed.width * 2, height: parsed.height * 2 }, `${view}: the PNG is the SVG at 2x`);
    await writeFile(join(ROOT, 'artifacts', 'screenshots', `share-export-${view}.png`), png.bytes);
  }
  // The SVG as another program would show it: an image on a blank page.
  const svg = await downloadOf(page, '#export-svg');
  const viewer = await freshPage();
  await viewer.setContent(`<img src="data:image/svg+xml;base64,${svg.bytes.toString('base64')}">`);
  await viewer.locator('img').evaluate((img) => img.decode());
  await viewer.locator('img').screenshot({ path: join(ROOT, 'artifacts', 'screenshots', 'share-export-svg-rendered.png') });
  await viewer.context().close();
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// The view root's pixels (at the page's device scale) against its PNG export, block by block: a
// block with detail (text, lines, cells) in the export must have detail on screen too, within two
// blocks (8 CSS px each), or the export drew something where the screen shows nothing (a scrolled table spilling over
// what follows it). The export puts the root at (MARGIN, MARGIN + TITLE_BAND) CSS px.
// The margin, the title's band and the subtitle's (parts/figure_export.js).
const EXPORT_OFFSET = { x: 16, y: 16 + 30 + 20 };
const BLOCK = 16;
const SPILL_NOISE = 4;
async function spill(page, pngBytes) {
  await page.evaluate(() => {
    document.activeElement?.blur();
    window.scrollTo(0, 0);
  });
  // The screen as the export lays it out: without the controls and explanations it leaves out, and
  // as wide as its boxes that scroll sideways need (figure_export.js exportLayout).
  await page.evaluate(async () => {
    const { exportLayout } = await import('./parts/figure_export.js');
    window.restoreLayout = exportLayout(document.querySelector('#view .view-root'));
  });
  const box = await page.locator('#view .view-root').boundingBox();
  const shot = await page.screenshot({ fullPage: true, clip: box, animations: 'disabled' });
  await page.evaluate(() => window.restoreLayout());
  return page.evaluate(
    async ({ shot, png, box, offset, block }) => {
      const scale = devicePixelRatio;
      const bitmapOf = async (b64) => createImageBitmap(await (await fetch(`data:image/png;base64,${b64}`)).blob());
      const [screen, exported] = await Promise.all([bitmapOf(shot), bitmapOf(png)]);
      const w = Math.floor(box.width * scale);
      const h = Math.floor(box.height * scale);
      const pixels = (bitmap, sx, sy) => {
        const canvas = new OffscreenCanvas(w, h);
        const ctx = canvas.getContext('2d');
        ctx.drawImage(bitmap, sx, sy, w, h, 0, 0, w, h);
        return ctx.getImageData(0, 0, w, h).data;
      };
      // Detail: a block whose luminance spans more than a flat background's. Each block reaches one
      // pixel into its neighbours, so an edge that falls exactly on a block boundary (a colour bar
      // aligned to the grid on screen, a subpixel off in the export) still counts as detail.
      const detail = (data) => {
        const cols = Math.ceil(w / block);
        const rows = Math.ceil(h / block);
        const out = new Uint8Array(cols * rows);
        for (let by = 0; by < rows; by++)
          for (let bx = 0; bx < cols; bx++) {
            let lo = 255;
            let hi = 0;
            for (let y = Math.max(0, by * block - 1); y < Math.min(h, (by + 1) * block + 1); y++)
              for (let x = Math.max(0, bx * block - 1); x < Math.min(w, (bx + 1) * block + 1); x++) {
                const i = (y * w + x) * 4;
                const l = 0.3 * data[i] + 0.59 * data[i + 1] + 0.11 * data[i + 2];
                lo = Math.min(lo, l);
                hi = Math.max(hi, l);
              }
            out[by * cols + bx] = hi - lo > 60 ? 1 : 0;
          }
        return { out, cols, rows };
      };
      const s = detail(pixels(screen, 0, 0));
      const e = detail(pixels(exported, offset.x * (exported.width / (box.width + 2 * offset.x)), offset.y * (exported.width / (box.width + 2 * offset.x))));
      const spilled = [];
      for (let by = 0; by < e.rows; by++)
        for (let bx = 0; bx < e.cols; bx++) {
          if (!e.out[by * e.cols + bx]) continue;
          let near = false;
          for (let dy = -2; dy <= 2 && !near; dy++)
            for (let dx = -2; dx <= 2 && !near; dx++) {
              const y = by + dy;
              const x = bx + dx;
              near = y >= 0 && x >= 0 && y < s.rows && x < s.cols && s.out[y * s.cols + x] === 1;
            }
          if (!near) spilled.push([bx * block, by * block]);
        }
      return { spilled, blocks: e.out.reduce((a, b) => a + b, 0), exportedWidth: exported.width, exportedHeight: exported.height, scale, width: box.width };
    },
    { shot: shot.toString('base64'), png: pngBytes.toString('base64'), box, offset: EXPORT_OFFSET, block: BLOCK },
  );
}

test('a figure of a run with heads knocked out says so under its title, in both languages', async () => {
  const page = await freshPage(`${server.url}#${await fragment({ ...FORMAT1_DEFAULTS, ...SHARED, view: 'lens', layer: 1, head: 3 })}`, { acceptDownloads: true });
  await stableUrl(page);
  await page.evaluate(() => window.attnscope.setState({ ...window.attnscope.getState(), ablate: [[1, 3], [0, 2]] }));
  await settled(page);
  const subtitleOf = async () => {
    const svg = await downloadOf(page, '#export-svg');
    return page.evaluate((text) => new DOMParser().parseFromString(text, 'image/svg+xml').querySelectorAll('text')[1].textContent, svg.bytes.toString('utf8'));
  };
  assert.match(await subtitleOf(), / · L0 H2, L1 H3 knocked out · “/);
  await page.evaluate(() => window.attnscope.setState({ ...window.attnscope.getState(), lang: 'zh' }));
  await settled(page);
  assert.match(await subtitleOf(), / · 已关掉 层 0 头 2, 层 1 头 3 · “/);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('every view exports as it is laid out for its export: nothing drawn outside what that layout shows (the Q·K table stays in its box)', async (t) => {
  const page = await freshPage(`${server.url}#${await fragment({ ...DEFAULTS, view: 'qk', query: 4, key: 2 })}`, { acceptDownloads: true, deviceScaleFactor: 2 });
  await stableUrl(page);
  // A scrollbar that comes and goes with the page's height (the share panel's note) would reflow a
  // view between its export and its screenshot.
  await page.addStyleTag({ content: 'html { overflow-y: scroll; }' });
  const views = await page.evaluate(() => window.attnscope.views);
  assert.ok(views.includes('qk') && views.length >= 14, `the page's views: ${views}`);
  for (const view of views) {
    // Open: the MHA / GQA / MQA view's exported KV frames come out a row taller than on screen
    // (its heatmaps' export repaint; parts/heatmap.js), so its comparison is reported, not asserted;
    // so is the KV-cache view's, whose stacked rows' export differs by 6 blocks at the bottom-left
    // of the stacked heatmap since inputs start with BOS (not yet explained; a spill is hundreds).
    const open = view === 'gqa' || view === 'decode';
    await page.evaluate((v) => window.attnscope.setState({ view: v }), view);
    await settled(page);
    // Lessons keep the share panel behind their sidebar button.
    if (view === 'lessons') await page.click('#lessons-sidebar');
    const png = await downloadOf(page, '#export-png');
    const result = await spill(page, png.bytes);
    assert.equal(result.scale, 2);
    // Width only: the GQA view's height moves by a row between one measurement and the next.
    assert.equal(result.exportedWidth, Math.ceil(result.width + 2 * EXPORT_OFFSET.x) * 2, `${view}: the export is the view root's width as laid out for it, nothing drawn past it`);
    assert.ok(result.blocks > 20, `${view}: the export has content`);
    if (open) t.diagnostic(`${view}: ${result.spilled.length} export blocks with detail where the screen has none`);
    // A few blocks of edge noise (a heatmap repainted at 2x for the export) are allowed; a spill is
    // hundreds (the Q·K table ran ~50 blocks over the steps before clipping).
    else assert.ok(result.spilled.length <= SPILL_NOISE, `${view}: export blocks with detail where the screen has none: ${JSON.stringify(result.spilled)}`);
    if (view === 'qk') {
      await mkdir(join(ROOT, 'artifacts', 'screenshots'), { recursive: true });
      await writeFile(join(ROOT, 'artifacts', 'screenshots', 'share-export-qk.png'), png.bytes);
    }
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// An embed in a page that is not a secure context (an http:// blog; here about:blank) gets no storage,
// and its IndexedDB open may answer neither yes nor no: the embed opens all the same.
test('an embed in a page without storage opens: no endless "Loading…"', async () => {
  const page = await freshPage(null, { viewport: { width: 800, height: 600 } });
  await page.setContent(`<iframe src="${server.url}#view=attention&embed=1" width="640" height="480"></iframe>`);
  await page.waitForFunction(() => document.querySelector('iframe').contentWindow.frames !== null);
  const frame = page.frames().find((f) => f.url().startsWith(server.url));
  assert.equal(await frame.evaluate(() => isSecureContext), false, 'the embed is not in a secure context');
  await frame.waitForFunction(() => window.attnscope?.app?.phase === 'ready', null, { timeout: 60_000 });
  assert.ok(await frame.locator('.view-attention canvas.heatmap-canvas').count() > 0, 'its view draws');
  await page.context().close();
});

// A figure only: with its explanations hidden ("prose") a 700 × 450 embed shows the map under the
// tensor's name, where the explanations filled it before.
test('an embed that hides its explanations shows the map in a blog-sized iframe', async () => {
  const page = await freshPage(null, { viewport: { width: 760, height: 520 } });
  for (const hide of [['input', 'config', 'tabs', 'toolbar'], ['input', 'config', 'tabs', 'toolbar', 'prose']]) {
    const hash = await fragment({ ...DEFAULTS, view: 'attention', lang: 'en', hide }, { embed: true });
    posts.set('/post.html', `<!doctype html><body style="margin:8px"><iframe src="${server.url}#${hash}" width="700" height="450"></iframe></body>`);
    await page.goto(`${host()}/post.html`);
    const frame = page.frames().find((f) => f.url().startsWith(server.url));
    await frame.waitForSelector('.view-attention canvas.heatmap-canvas', { timeout: 90_000 });
    await settled(frame);
    const seen = await frame.evaluate(() => ({
      explain: document.querySelector('.view-attention .explain').getBoundingClientRect().height,
      mapTop: document.querySelector('.view-attention canvas.heatmap-canvas').getBoundingClientRect().top,
      height: innerHeight,
    }));
    if (hide.includes('prose')) {
      assert.equal(seen.explain, 0, 'no explanation drawn');
      assert.ok(seen.mapTop < seen.height / 2, `the map starts in the iframe's top half: ${JSON.stringify(seen)}`);
    } else assert.ok(seen.explain > 0 && seen.mapTop > seen.height / 2, `explanations first: ${JSON.stringify(seen)}`);
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a figure in a post lets its core go while it is only read, and a click that needs the core starts it again: the same numbers', async () => {
  const page = await freshPage(null, { viewport: { width: 760, height: 900 } });
  const hash = await fragment({ ...DEFAULTS, model: { kind: 'builtin' }, view: 'attention', lang: 'en', layer: 0, head: 1, hide: ['input', 'config', 'tabs'] }, { embed: true });
  posts.set('/post.html', `<!doctype html><body style="margin:8px"><iframe src="${server.url}#${hash}" width="700" height="860"></iframe></body>`);
  await page.goto(`${host()}/post.html`);
  const frame = page.frames().find((f) => f.url().startsWith(server.url));
  await frame.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 90_000 });
  await settled(frame);
  assert.equal(await frame.evaluate(() => window.attnscope.coreLive()), true);
  // Idle for 4 s, the worker goes; the drawing stays, its tooltips read the tensors on the page.
  await frame.waitForFunction(() => !window.attnscope.coreLive(), null, { timeout: 15_000 });
  assert.ok(await frame.locator('.view-attention canvas.heatmap-canvas').isVisible());
  // Another layer needs the core: it starts again, with the model, and draws that layer's weights.
  await frame.evaluate(() => window.attnscope.setState({ layer: 3 }));
  await settled(frame);
  assert.equal(await frame.evaluate(() => window.attnscope.coreLive()), true);
  const [shown, worker] = await frame.evaluate(async () => {
    const canvas = document.querySelector('.view-attention canvas.heatmap-canvas');
    canvas.focus();
    // Cell (3, 0): the first key's weight in the fourth query's row.
    for (const key of ['ArrowRight', 'ArrowDown', 'ArrowDown', 'ArrowDown']) canvas.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    const value = Number(document.getElementById('tooltip').dataset.value);
    const { tensors } = await window.attnscope.call('tensors', { args: window.attnscope.app.args(), names: ['layers.3.attn.probs'] });
    const T = window.attnscope.app.state.tokens.ids.length;
    return [value, tensors[0].data[(1 * T + 3) * T]];
  });
  assert.ok(Math.abs(shown - worker) < 1e-6 && shown > 0 && shown < 1, `layer 3 head 1, cell (3, 0): shown ${shown}, the restarted core's ${worker}`);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// What a figure draws in cell (3, 0) of its attention map, and the same weight from the core it uses.
async function mapCell(frame, layer, head) {
  return frame.evaluate(
    async ({ layer, head }) => {
      const canvas = document.querySelector('.view-attention canvas.heatmap-canvas');
      canvas.focus();
      for (const key of ['ArrowRight', 'ArrowDown', 'ArrowDown', 'ArrowDown']) canvas.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
      const value = Number(document.getElementById('tooltip').dataset.value);
      const { tensors } = await window.attnscope.call('tensors', { args: window.attnscope.app.args(), names: [`layers.${layer}.attn.probs`] });
      const T = window.attnscope.app.state.tokens.ids.length;
      return [value, tensors[0].data[(head * T + 3) * T]];
    },
    { layer, head },
  );
}

// A post's figure drawn on the built-in model (polled: a frame below the post's fold gets no
// animation frames).
async function figureDrawn(frame) {
  await frame.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000, polling: 100 });
  await settled(frame);
}

// How many of a post's figures hold a core once they settle: on a machine so busy that two figures
// were granted at once, the later gives way to the earlier within a beat (turns.js giveWay).
async function coresHeld(figures) {
  const holding = () => Promise.all(figures().map((f) => f.evaluate(() => window.attnscope.coreLive()))).then((live) => live.filter(Boolean).length);
  for (const t0 = Date.now(); (await holding()) !== 1 && Date.now() - t0 < 10_000; ) await new Promise((r) => setTimeout(r, 100));
  return holding();
}

test('a post’s figures share one core: one worker, the weights read once, every figure drawn with its own numbers; a trap and the figure holding it leaving are survived', async (t) => {
  const page = await freshPage(null, { viewport: { width: 760, height: 900 } });
  const heads = [[0, 1], [1, 2], [2, 1], [3, 6]];
  const frames = [];
  for (const [i, [layer, head]] of heads.entries()) frames.push(`<iframe id="f${i}" src="${server.url}#${await fragment({ ...DEFAULTS, model: { kind: 'builtin' }, view: 'attention', lang: 'en', layer, head, hide: ['input', 'config', 'tabs'] }, { embed: true })}" width="700" height="400"></iframe>`);
  posts.set('/post-four.html', `<!doctype html><body style="margin:8px">${frames.join('<p>Between the figures.</p>')}</body>`);
  const weights = [];
  page.on('request', (request) => request.url().endsWith('/model.safetensors') && weights.push(request.url()));
  // How many of the figures hold a worker, sampled while they load.
  let most = 0;
  let sampling = true;
  const counting = (async () => {
    while (sampling) {
      const live = await Promise.all(page.frames().filter((f) => f.url().startsWith(server.url)).map((f) => f.evaluate(() => window.attnscope?.coreLive() ?? false).catch(() => false)));
      most = Math.max(most, live.filter(Boolean).length);
      await new Promise((r) => setTimeout(r, 40));
    }
  })();
  await page.goto(`${host()}/post-four.html`);
  await page.waitForFunction(() => document.querySelectorAll('iframe').length === 4);
  const figures = () => page.frames().filter((f) => f.url().startsWith(server.url));
  for (const frame of figures()) await figureDrawn(frame);
  sampling = false;
  await counting;
  // One core (coresHeld), and each core read the weights once.
  assert.equal(await coresHeld(figures), 1, 'one figure holds the core once they are drawn');
  t.diagnostic(`cores while loading: ${most}; weights fetched: ${weights.length}`);
  assert.ok(most >= 1 && most <= 2, `figures holding a worker at once while they load: at most ${most}`);
  assert.ok(weights.length >= 1 && weights.length <= most, `the weights were fetched ${weights.length} times, by ${most} cores`);
  // Each drew its own head's weights: cell (3, 0) of its map, against the core it uses.
  for (const [i, frame] of figures().entries()) {
    const [layer, head] = heads[i];
    const [shown, core] = await mapCell(frame, layer, head);
    assert.ok(Math.abs(shown - core) < 1e-6 && shown > 0 && shown < 1, `L${layer}H${head}, cell (3, 0): shown ${shown}, its core's ${core}`);
  }
  const before = figures();
  const holder = (await Promise.all(before.map((f) => f.evaluate(() => window.attnscope.coreLive())))).indexOf(true);
  assert.ok(holder >= 0, 'one figure holds the core');
  // Another figure's call traps the shared core (a hand-set array of 2^30 numbers, as in
  // trap.test.mjs): that figure is told in one sentence, the core is replaced, and every figure's
  // model answers again with the same numbers.
  const error = await before[holder === 0 ? 1 : 0].evaluate(() => window.attnscope.call('silu', { z: { length: 2 ** 30 - 16 } }).then(() => null, (err) => err.message));
  assert.match(error ?? 'no error', /^The core stopped: it ran out of memory or hit a bug/);
  for (const [i, frame] of before.entries()) {
    const [layer, head] = heads[i];
    const [shown, core] = await mapCell(frame, layer, head);
    assert.ok(Math.abs(shown - core) < 1e-6, `after the trap, L${layer}H${head}: shown ${shown}, the new core's ${core}`);
  }
  // The post drops the figure whose worker is the core: the others go on, on a core of their own
  // choosing, and a change draws that layer's numbers.
  await page.evaluate((id) => document.getElementById(id).remove(), `f${holder}`);
  const stays = holder === 0 ? 1 : 0;
  const [left, other] = [heads[stays], before[stays]];
  const layer = left[0] === 3 ? 2 : 3;
  await other.evaluate((layer) => window.attnscope.setState({ layer }), layer);
  await other.waitForFunction((layer) => window.attnscope.app.state.layer === layer && window.attnscope.app.phase === 'ready', layer, { timeout: 30_000, polling: 100 });
  await settled(other);
  const [shown, core] = await mapCell(other, layer, left[1]);
  assert.ok(Math.abs(shown - core) < 1e-6 && shown > 0 && shown < 1, `after the core's figure left, L${layer}H${left[1]}: shown ${shown}, its core's ${core}`);
  const remaining = before.filter((_, i) => i !== holder);
  assert.equal((await Promise.all(remaining.map((f) => f.evaluate(() => window.attnscope.coreLive())))).filter(Boolean).length, 1, 'one of the three holds the core now');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// boot.js is an async script: on the main thread a post's figures share, it can run after app.js.
// app.js waits for it, so such a figure still asks the turns for the post's core; before, it
// started a worker of its own at once (a second core, the weights read again) and boot.js then a
// third worker that waited for turns.
test('a figure whose boot.js arrives after app.js still shares the post’s core', async () => {
  const page = await freshPage(null, { viewport: { width: 760, height: 900 } });
  const frames = [];
  for (const [i, layer] of [0, 1].entries()) frames.push(`<iframe id="g${i}" src="${server.url}#${await fragment({ ...DEFAULTS, model: { kind: 'builtin' }, view: 'attention', lang: 'en', layer, head: 1, hide: ['input', 'config', 'tabs'] }, { embed: true })}" width="700" height="400"></iframe>`);
  posts.set('/post-late-boot.html', `<!doctype html><body style="margin:8px">${frames.join('<p>Between the figures.</p>')}</body>`);
  // boot.js held back until both figures' DOMContentLoaded: each one's app.js (a deferred module)
  // has then run up to its first await, before boot.js. Every worker's script noted.
  const figures = () => page.frames().filter((f) => f.url().startsWith(server.url));
  let heldPast = 0; // figures whose boot.js came after their DOMContentLoaded
  const workers = [];
  await page.context().route(/\/boot\.js$/, async (route) => {
    for (const t0 = Date.now(); Date.now() - t0 < 60_000; await new Promise((r) => setTimeout(r, 100))) {
      const loaded = await Promise.all(figures().map((f) => f.evaluate(() => performance.getEntriesByType('navigation')[0]?.domContentLoadedEventStart > 0).catch(() => false)));
      if (loaded.length === 2 && loaded.every(Boolean)) {
        heldPast += 1;
        break;
      }
    }
    await route.continue();
  });
  await page.context().route(/\/worker\.js(\?.*)?$/, (route) => {
    workers.push(new URL(route.request().url()).search);
    return route.continue();
  });
  await page.goto(`${host()}/post-late-boot.html`);
  await page.waitForFunction(() => document.querySelectorAll('iframe').length === 2);
  for (const frame of figures()) await figureDrawn(frame);
  assert.equal(heldPast, 2, 'both figures had run app.js (DOMContentLoaded) before their boot.js arrived');
  assert.equal(workers.length, 2, `one worker per figure: ${JSON.stringify(workers)}`);
  assert.ok(workers.every((search) => search === '?figure=1'), `every worker waited for the turns (boot.js's): ${JSON.stringify(workers)}`);
  assert.equal(await coresHeld(figures), 1, 'one figure holds the core');
  for (const [layer, frame] of figures().entries()) {
    const [shown, core] = await mapCell(frame, layer, 1);
    assert.ok(Math.abs(shown - core) < 1e-6 && shown > 0 && shown < 1, `L${layer}H1, cell (3, 0): shown ${shown}, its core's ${core}`);
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// A lesson computes its own examples: its embed shows neither the page's sentence nor the button for
// the sentence and model panels, and with the tabs hidden, no chips of the other lessons.
test('an embedded lesson keeps to the lesson', async () => {
  const page = await freshPage(null, { viewport: { width: 760, height: 520 } });
  const hash = await fragment({ ...DEFAULTS, view: 'lessons', lesson: 'qk', lang: 'en', hide: ['input', 'config', 'tabs'] }, { embed: true });
  posts.set('/lesson.html', `<!doctype html><body style="margin:8px"><iframe src="${server.url}#${hash}" width="700" height="450"></iframe></body>`);
  await page.goto(`${host()}/lesson.html`);
  const frame = page.frames().find((f) => f.url().startsWith(server.url));
  await frame.waitForSelector('.view-lessons .lesson-intro', { timeout: 90_000 });
  await settled(frame);
  for (const selector of ['#lessons-sidebar', '.embed-sentence', '.lesson-tabs']) assert.ok(await frame.locator(selector).first().isHidden(), `${selector} hidden`);
  assert.ok(await frame.locator('.view-lessons .lesson-intro').isVisible());
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// A run's error in a short iframe is read whole: the view keeps most of the height, the input panel
// gives way first (it was the view that shrank to a sliver under the text box).
test('a run refused in a 300 px embed shows its whole message', async () => {
  const config = { hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1, intermediate_size: 64, max_position_embeddings: 8 };
  const hash = await fragment({ ...FORMAT1_DEFAULTS, model: { kind: 'random' }, config, text: 'one two three four five six seven eight nine ten', view: 'attention', lang: 'en' }, { embed: true });
  const page = await freshPage(null, { viewport: { width: 800, height: 400 } });
  posts.set('/short.html', `<!doctype html><body style="margin:8px"><iframe src="${server.url}#${hash}" width="640" height="300"></iframe></body>`);
  await page.goto(`${host()}/short.html`);
  const frame = page.frames().find((f) => f.url().startsWith(server.url));
  await frame.waitForSelector('.message-error pre', { timeout: 60_000 });
  const seen = await frame.evaluate(() => {
    const box = document.querySelector('.message-error').getBoundingClientRect();
    const view = document.getElementById('view').getBoundingClientRect();
    return { inside: box.top >= view.top - 1 && box.bottom <= view.bottom + 1, view: view.height, height: innerHeight };
  });
  assert.ok(seen.inside, `the message ends inside the view (${JSON.stringify(seen)})`);
  assert.ok(seen.view >= 0.5 * (seen.height - 100), `the view keeps most of the height (${JSON.stringify(seen)})`);
  await page.context().close();
});

// Where an embedded page's boxes end, against its iframe's height: the top bar, the sidebar, the view,
// any banner; and whether the document or the view scroll.
function embedLayout(frame) {
  return frame.evaluate(() => {
    const root = document.documentElement;
    const view = document.getElementById('view');
    const bottoms = [...document.querySelectorAll('.topbar, .banner, .sidebar, #view')].filter((n) => n.checkVisibility()).map((n) => n.getBoundingClientRect().bottom);
    return {
      height: innerHeight,
      bottom: Math.max(...bottoms),
      pageScroll: root.scrollHeight - root.clientHeight,
      viewScroll: view.scrollHeight - view.clientHeight,
      backend: ['#backend', '#gpu-check', '#gpu-note'].filter((s) => document.querySelector(s).checkVisibility()),
    };
  });
}

test('an embed of every view shows no backend controls and cuts no panel off: a fixed iframe fits it, <attn-scope> grows to it', async () => {
  const state = await fragment({ ...DEFAULTS, view: 'attention' }, { embed: true });
  const page = await freshPage(null, { viewport: { width: 900, height: 1000 } });
  posts.set(
    '/fit.html',
    `<!doctype html><body style="margin:8px;font:14px sans-serif">
<iframe id="fixed" src="${server.url}#${state}" width="640" height="480" style="border:1px solid #999"></iframe>
<script src="${server.url}element.js"></script>
<attn-scope id="auto" state="${(await fragment({ ...DEFAULTS, view: 'attention', hide: ['input', 'config'] })).replace(/&/g, '&amp;')}" width="640" label="Auto"></attn-scope>
</body>`,
  );
  await page.goto(`${host()}/fit.html`);
  await page.waitForFunction(() => document.getElementById('auto').getState()?.view === 'attention', null, { timeout: 90_000 });
  const frames = page.frames().filter((f) => f.url().startsWith(server.url));
  assert.equal(frames.length, 2);
  for (const frame of frames) await settled(frame);
  // The element's page hides the input and the model; the plain iframe's shows them.
  const hidesInput = (f) => f.evaluate(() => window.attnscope.getState().hide.includes('input'));
  const autoFrame = (await hidesInput(frames[0])) ? frames[0] : frames[1];
  const fitFrame = autoFrame === frames[0] ? frames[1] : frames[0];
  // The model panel an embed keeps is folded to its heading, which opens and closes it.
  const modelOpen = () => fitFrame.locator('[data-hideable="config"] > :not(.panel-heading)').first().isVisible();
  const heading = fitFrame.locator('#config-heading .panel-fold');
  assert.equal(await heading.isVisible(), true);
  assert.equal(await fitFrame.locator('h2#config-heading').count(), 1, 'the heading stays a heading');
  assert.equal(await modelOpen(), false, 'folded');
  await heading.click();
  assert.deepEqual([await modelOpen(), await heading.getAttribute('aria-expanded')], [true, 'true']);
  await heading.press('Enter');
  assert.deepEqual([await modelOpen(), await heading.getAttribute('aria-expanded')], [false, 'false']);
  const views = await fitFrame.evaluate(() => window.attnscope.views);
  for (const view of views) {
    await fitFrame.evaluate((v) => window.attnscope.setState({ view: v }), view);
    await page.evaluate((v) => document.getElementById('auto').setState({ view: v }), view);
    await settled(fitFrame);
    await settled(autoFrame);
    const fit = await embedLayout(fitFrame);
    assert.deepEqual(fit.backend, [], `${view}: no backend controls in a fixed iframe`);
    assert.equal(fit.height, 480);
    assert.ok(fit.bottom <= fit.height + 0.5, `${view}: every panel ends inside the 480px iframe (${fit.bottom}px)`);
    assert.ok(fit.pageScroll <= 0, `${view}: the embedded page itself does not scroll (${fit.pageScroll}px)`);
    // The element follows the content's height once the page has reported it.
    let grown = null;
    let element = null;
    for (let tries = 0; tries < 40; tries++) {
      grown = await embedLayout(autoFrame);
      element = await page.locator('#auto').boundingBox();
      if (grown.viewScroll <= 1 && grown.pageScroll <= 0 && grown.bottom <= grown.height + 0.5 && Math.abs(element.height - grown.height) <= 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(grown.backend, [], `${view}: no backend controls in <attn-scope>`);
    assert.ok(grown.viewScroll <= 1, `${view}: <attn-scope> grew to the whole view (${grown.viewScroll}px still scroll)`);
    assert.ok(grown.bottom <= grown.height + 0.5 && grown.pageScroll <= 0, `${view}: nothing past its bottom edge`);
    assert.ok(Math.abs(element.height - grown.height) <= 1, `${view}: the element is its iframe's height (${element.height} vs ${grown.height})`);
    if (view === 'qk' || view === 'attention') await screenshot(page, `share-embed-fit-${view}`);
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('the share panel copies a link and an embed snippet with the hide flags it sets', async () => {
  const page = await freshPage(`${server.url}#view=attention`, { permissions: ['clipboard-read', 'clipboard-write'] });
  await stableUrl(page);
  await page.check('#share-hide-config');
  await page.check('#share-hide-toolbar');
  await page.click('#share-link');
  await page.locator('.share-note').filter({ hasText: /copied/ }).waitFor();
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.deepEqual((await decode(hashOf(link))).state.hide, ['config', 'toolbar']);
  await page.click('#share-embed');
  await page.locator('.share-note').filter({ hasText: /Embed code copied/ }).waitFor();
  const snippet = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(snippet, /^<iframe src="http:\/\/[^"]+#s3\.[A-Za-z0-9_-]+&amp;embed=1" title="attnscope · Attention map" width="\d+" height="\d+"[^>]*><\/iframe>$/);
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'share-panel');
  // Said of what was on screen then: another view clears it.
  await page.evaluate(() => window.attnscope.setState({ view: 'masks' }));
  await page.waitForFunction(() => document.querySelector('.share-note').textContent === '');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();

  // The snippet, pasted into a blog of another origin.
  const reader = await freshPage();
  posts.set('/post.html', `<!doctype html><h1>My post</h1>${snippet}<p>After the figure.</p>`);
  await reader.goto(`${host()}/post.html`);
  const frame = await (await reader.waitForSelector('iframe')).contentFrame();
  await settled(frame);
  assert.equal(await frame.evaluate(() => document.documentElement.classList.contains('embed')), true);
  assert.equal(await frame.locator('[data-hideable="config"]').isVisible(), false, 'the author hid the model panel');
  assert.equal(await frame.locator('.view .toolbar').isVisible(), false, 'and the view controls');
  assert.equal(await frame.locator('[data-hideable="input"]').isVisible(), true);
  // The snippet's height holds the text box and the whole map: the view is not a scrolled box.
  const view = await frame.evaluate(() => {
    const v = document.querySelector('.view');
    return { scroll: v.scrollHeight, client: v.clientHeight, samples: document.querySelector('.samples')?.offsetHeight ?? 0 };
  });
  assert.ok(view.scroll <= view.client + 2, `the view is shown whole (${view.scroll} px in ${view.client} px)`);
  assert.equal(view.samples, 0, 'no sample sentences in a figure');
  await screenshot(reader, 'share-embed-snippet');
  assert.deepEqual(reader.consoleErrors, []);
  await reader.context().close();

  // A theme fixed for a dark post: the snippet says it, the embed draws dark on a light reader's
  // system and keeps it when the state changes (the link it rewrites still says it).
  const author = await freshPage(`${server.url}#view=attention`, { permissions: ['clipboard-read', 'clipboard-write'], colorScheme: 'light' });
  await stableUrl(author);
  await author.selectOption('.share-theme', 'dark');
  await author.click('#share-embed');
  await author.locator('.share-note').filter({ hasText: /Embed code copied/ }).waitFor();
  const dark = await author.evaluate(() => navigator.clipboard.readText());
  assert.match(dark, /&amp;embed=1&amp;theme=dark" title=/);
  await author.context().close();
  const night = await freshPage(null, { colorScheme: 'light' });
  posts.set('/dark.html', `<!doctype html><body style="background:#111">${dark}</body>`);
  await night.goto(`${host()}/dark.html`);
  const darkFrame = await (await night.waitForSelector('iframe')).contentFrame();
  await settled(darkFrame);
  assert.equal(await darkFrame.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await darkFrame.evaluate(() => window.attnscope.setState({ head: 2 }));
  await settled(darkFrame);
  await darkFrame.waitForFunction(() => location.hash.includes('&theme=dark') && location.hash.includes('&embed=1'));
  assert.deepEqual(night.consoleErrors, []);
  await night.context().close();
});

test('embed mode fits iframes of three sizes with one view, little chrome and an "open in attnscope" link', async () => {
  const state = { ...FORMAT1_STATE, view: 'attention', layer: 1, head: 2, hide: ['config', 'input'] };
  const src = `${server.url}#${await fragment(state, { embed: true })}`;
  const sizes = [
    { width: 360, height: 560 },
    { width: 640, height: 480 },
    { width: 1000, height: 720 },
  ];
  const page = await freshPage(null, { viewport: { width: 1100, height: 1900 } });
  posts.set('/sizes.html', `<!doctype html><body style="margin:8px;font:14px sans-serif">${sizes.map((s) => `<p>${s.width} × ${s.height}</p><iframe src="${src}" width="${s.width}" height="${s.height}" style="border:1px solid #999"></iframe>`).join('')}</body>`);
  await page.goto(`${host()}/sizes.html`);
  await page.waitForFunction((n) => document.querySelectorAll('iframe').length === n, sizes.length);
  const frames = await Promise.all((await page.$$('iframe')).map((f) => f.contentFrame()));
  for (const [i, frame] of frames.entries()) {
    await settled(frame);
    await frame.waitForFunction(() => document.getElementById('open-full').href.includes('#s3.'));
    const layout = await frame.evaluate(() => ({
      embed: document.documentElement.classList.contains('embed'),
      overflowX: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      brand: getComputedStyle(document.querySelector('.brand')).display,
      share: getComputedStyle(document.querySelector('[data-hideable="share"]')).display,
      sidebar: getComputedStyle(document.querySelector('.sidebar')).display,
      open: document.getElementById('open-full').href,
      openVisible: document.getElementById('open-full').getBoundingClientRect().width > 0,
      canvases: document.querySelectorAll('#view canvas').length,
    }));
    assert.ok(layout.embed, `${sizes[i].width}: embed mode`);
    assert.ok(layout.overflowX <= 0, `${sizes[i].width}: no sideways scrolling (${layout.overflowX}px)`);
    assert.equal(layout.brand, 'none');
    assert.equal(layout.share, 'none');
    assert.equal(layout.sidebar, 'none', 'input and model hidden by the author');
    assert.ok(layout.openVisible && layout.canvases > 0);
    assert.ok(!layout.open.includes('embed'), 'the full page opens without embed mode');
    assert.deepEqual((await decode(hashOf(layout.open))).state, state);
  }
  await screenshot(page, 'share-embed-sizes');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('<attn-scope> on a plain HTML page: one script tag, sized by attributes, scriptable', async () => {
  const state = `${await fragment({ ...FORMAT1_DEFAULTS, view: 'grid' })}&hide=input,config`;
  const page = await freshPage();
  posts.set(
    '/docs.html',
    `<!doctype html><title>Docs</title><body style="margin:16px;font:15px sans-serif">
<h1>Heads at a glance</h1>
<script src="${server.url}element.js"></script>
<attn-scope id="fig" state="${state}" width="720" height="520" label="Head grid"></attn-scope>
<p>Text after the figure.</p>
<script>window.changes = []; document.getElementById('fig').addEventListener('statechange', (e) => window.changes.push(e.detail));</script>
</body>`,
  );
  await page.goto(`${host()}/docs.html`);
  const box = await page.locator('#fig').boundingBox();
  assert.deepEqual([box.width, box.height], [720, 520]);
  assert.equal(await page.evaluate(() => document.getElementById('fig').shadowRoot.querySelector('iframe').title), 'Head grid');
  await page.waitForFunction(() => window.changes.length > 0, null, { timeout: 90_000 });
  const frame = page.frames().find((f) => f.url().startsWith(server.url));
  await settled(frame);
  // The figure leaves out the reader's sentence until the host page asks for it (api.js).
  assert.equal('text' in (await page.evaluate(() => document.getElementById('fig').getState())), false);
  const first = await page.evaluate(() => document.getElementById('fig').withText());
  assert.equal(first.view, 'grid');
  assert.deepEqual(first.hide, ['config', 'input']);
  // Its input hidden, the figure still says which sentence it is of, on one line under the tabs.
  const sentence = frame.locator('#embed-sentence');
  assert.ok(await sentence.isVisible());
  assert.equal(await sentence.textContent(), `Sentence: “${first.text}”`);
  const next = await page.evaluate(() => document.getElementById('fig').setState({ view: 'attention', head: 3 }));
  assert.deepEqual([next.view, next.head], ['attention', 3]);
  await settled(frame);
  assert.equal(await frame.locator('.view-attention select[name="head"]').inputValue(), '3');
  assert.equal(await frame.locator('.qk-tutorial-pair').isVisible(), false, 'a figure offers no switch away from its sentence');
  const link = await page.evaluate(() => document.getElementById('fig').link());
  assert.deepEqual((await decode(hashOf(link))).state, next);
  await page.evaluate(async (s) => document.getElementById('fig').setAttribute('state', s), await fragment({ ...FORMAT1_DEFAULTS, view: 'masks' }));
  await page.waitForFunction(() => window.changes.at(-1)?.view === 'masks', null, { timeout: 90_000 });
  await settled(frame);
  assert.ok(!(await frame.locator('#embed-sentence').isVisible()), 'with the input shown, no second copy of the sentence');
  await screenshot(page, 'share-element');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// A page framed by another site hears from attnscope only as its embed's parent: a site that frames
// the whole page (not as an embed) hears nothing of what the reader types; an embed tells its parent
// its state without the reader's text until the parent asks for it (withText), then with it, and
// never the window above its parent, which cannot ask for it either.
test('the page posts its state only as an embed, only to its parent, and the reader’s text only once the parent asked', async () => {
  // The blog (127.0.0.1) frames a page of another origin (localhost, the blog's port), which frames
  // attnscope twice: the whole page, and an embed through <attn-scope>.
  const mid = `http://localhost:${blog.address().port}`;
  const record = `window.heard = []; addEventListener('message', (e) => window.heard.push({ from: [...document.querySelectorAll('iframe')].findIndex((f) => f.contentWindow === e.source), data: e.data, origin: e.origin }));`;
  posts.set('/top.html', `<!doctype html><title>Top</title><body><script>${record}</script><iframe src="${mid}/mid.html" width="1200" height="1600"></iframe></body>`);
  posts.set(
    '/mid.html',
    `<!doctype html><title>Middle</title><body><script>${record.replace("document.querySelectorAll('iframe')", "[document.getElementById('whole'), document.getElementById('fig').shadowRoot.querySelector('iframe')]")}</script>
<script src="${server.url}element.js"></script>
<iframe id="whole" src="${server.url}${randomModel({ view: 'attention' })}" width="1100" height="700"></iframe>
<attn-scope id="fig" state="${(await fragment({ ...FORMAT1_DEFAULTS, view: 'attention' })).replace(/&/g, '&amp;')}" width="1100" height="700"></attn-scope>
</body>`,
  );
  const page = await freshPage(`${host()}/top.html`);
  const frameOf = async (test) => {
    for (;;) {
      const found = page.frames().find((f) => test(f.url()));
      if (found) return found;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const middle = await frameOf((url) => url.startsWith(mid));
  const whole = await frameOf((url) => url.startsWith(server.url) && !url.includes('embed'));
  const embedded = await frameOf((url) => url.startsWith(server.url) && url.includes('embed'));
  await Promise.all([settled(whole), settled(embedded)]);
  await middle.waitForFunction(() => document.getElementById('fig').getState() !== null, null, { timeout: 90_000 });
  const secret = 'A sentence only the reader should see.';
  const type = async (frame, text) => {
    await frame.fill('#text', text);
    await frame.waitForFunction((t) => window.attnscope.getState().text === t, text);
    await settled(frame);
  };
  // Everything one window posted to another before a marker has arrived once the marker has: they
  // arrive in order.
  const heardBefore = async (listener, sender, target) => {
    const mark = Math.random();
    await sender.evaluate(([t, m]) => window[t].postMessage({ mark: m }, '*'), [target, mark]);
    await listener.waitForFunction((m) => window.heard.some((h) => h.data?.mark === m), mark);
    return listener.evaluate((m) => window.heard.filter((h) => h.data?.mark === undefined), mark);
  };
  await type(whole, secret);
  await type(embedded, `${secret} Embedded.`);
  // The window above the embed's parent, and the embed's own, ask for the text: neither is its
  // parent, so neither is answered.
  await page.evaluate(() => {
    for (let i = 0; i < frames[0].length; i++) frames[0][i].postMessage({ attnscope: 'subscribe', text: true, id: 7 }, '*');
  });
  await embedded.evaluate(() => window.postMessage({ attnscope: 'subscribe', text: true, id: 8 }, '*'));
  await type(embedded, `${secret} Again.`);
  await heardBefore(middle, whole, 'parent');
  const toMiddle = await heardBefore(middle, embedded, 'parent');
  assert.deepEqual(toMiddle.filter((h) => h.from === 0), [], 'the whole page framed by another site posts nothing');
  const fromEmbed = toMiddle.filter((h) => h.from === 1);
  assert.ok(fromEmbed.some((h) => h.data.attnscope === 'state' && h.data.state.view === 'attention'), 'the embed tells its parent its state');
  assert.ok(fromEmbed.every((h) => h.origin === new URL(server.url).origin));
  assert.ok(!JSON.stringify(fromEmbed).includes(secret), 'without the text the reader typed');
  assert.ok(fromEmbed.filter((h) => h.data.attnscope === 'state').every((h) => !('text' in h.data.state) && h.data.link === null), 'nor the link that holds it');
  assert.equal(await middle.evaluate(() => 'text' in document.getElementById('fig').getState()), false);
  // The parent asks: the state comes with the text, and keeps coming with it.
  const asked = await middle.evaluate(() => document.getElementById('fig').withText());
  assert.equal(asked.text, `${secret} Again.`);
  await type(embedded, `${secret} Once more.`);
  await middle.waitForFunction((t) => document.getElementById('fig').getState().text === t, `${secret} Once more.`);
  const link = await middle.evaluate(() => document.getElementById('fig').link());
  assert.equal((await decode(hashOf(link))).state.text, `${secret} Once more.`);
  // The window above heard nothing from either page, before or after.
  const toTop = await heardBefore(page, embedded, 'top');
  assert.deepEqual(toTop, [], 'nothing reaches the window above the parent');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('<attn-scope> moved in the host page loads again and stays scriptable; setState right after a new src waits for the new page', async () => {
  const state = `${await fragment({ ...FORMAT1_DEFAULTS, view: 'attention' })}&hide=input,config`;
  const page = await freshPage();
  posts.set(
    '/moved.html',
    `<!doctype html><title>Tabs</title><body>
<script src="${server.url}element.js"></script>
<div id="a"><attn-scope id="fig" state="${state}" width="640" height="420"></attn-scope></div><div id="b"></div>
<script>window.changes = []; document.getElementById('fig').addEventListener('statechange', (e) => window.changes.push(e.detail));</script>
</body>`,
  );
  await page.goto(`${host()}/moved.html`);
  await page.waitForFunction(() => window.changes.length > 0, null, { timeout: 90_000 });
  // A tab widget moves the figure: it loads in its new place and answers setState there.
  const moved = await page.evaluate(async () => {
    const fig = document.getElementById('fig');
    document.getElementById('b').append(fig);
    const next = await fig.setState({ head: 2 });
    return { head: next.head, frames: fig.shadowRoot.querySelectorAll('iframe').length, parent: fig.parentElement.id };
  });
  assert.deepEqual(moved, { head: 2, frames: 1, parent: 'b' });
  // Another src reloads the frame: setState waits for the new page, which then shows what it said.
  const reloaded = await page.evaluate(async (src) => {
    const fig = document.getElementById('fig');
    fig.setAttribute('src', src);
    const next = await fig.setState({ head: 3 });
    return next.head;
  }, `${server.url}index.html?again=1`);
  assert.equal(reloaded, 3);
  const frame = page.frames().find((f) => f.url().includes('again=1'));
  await settled(frame);
  assert.equal(await frame.evaluate(() => window.attnscope.getState().head), 3);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

// A post of 700 px on another origin: what happens inside its figures stays inside them.
test('<attn-scope> in a post: no history entries from inside, a way back to the figure, one statechange per change, invalid fields ignored, setState off-screen, reserved heights, and a fallback offline', async () => {
  const grid = (await fragment({ ...FORMAT1_DEFAULTS, view: 'grid' })).replace(/&/g, '&amp;');
  const attention = (await fragment({ ...FORMAT1_DEFAULTS, view: 'attention' })).replace(/&/g, '&amp;');
  const body = (script) => `<!doctype html><title>Post</title><body style="margin:8px;width:700px">
<script src="${script}"></script>
<p>Before the figure.</p>
<attn-scope id="fig" state="${grid}&amp;hide=input,config" width="700" height="560" label="Head grid">Head grid</attn-scope>
<p>Between.</p>
<div style="height:3000px"></div>
<attn-scope id="lazy" state="${attention}&amp;hide=input,config" width="700" style="display:block;height:640px" label="Attention map"><a href="${server.url}#${attention}">Attention map · open in attnscope ↗</a></attn-scope>
<attn-scope id="bare" state="${attention}" width="700" height="300" label="Bare figure"></attn-scope>
<script>
  window.changes = 0; window.heights = [];
  document.getElementById('fig').addEventListener('statechange', () => window.changes++);
  new ResizeObserver(() => window.heights.push(document.getElementById('lazy').getBoundingClientRect().height)).observe(document.getElementById('lazy'));
</script>
</body>`;
  posts.set('/post-figures.html', body(`${server.url}element.js`));
  const page = await freshPage(null, { viewport: { width: 720, height: 900 } });
  await page.goto(`${host()}/post-figures.html`);
  const height = (id) => page.evaluate((i) => document.getElementById(i).getBoundingClientRect().height, id);
  assert.equal(await height('fig'), 560, 'reserved before it loads');
  assert.equal(await height('lazy'), 640, 'the snippet’s height, reserved before it loads');
  await page.waitForFunction(() => document.getElementById('fig').getState() !== null, null, { timeout: 90_000 });
  const frameOf = async (selector) => (await page.locator(selector).evaluateHandle((e) => e.shadowRoot.querySelector('iframe'))).asElement().contentFrame();
  const frame = await frameOf('#fig');
  await settled(frame);
  const entries = await page.evaluate(() => history.length);
  assert.equal(await height('fig'), 560, 'the same height once loaded');

  // One statechange per change; an invalid field is ignored (docs/embedding.md).
  const before = await page.evaluate(() => window.changes);
  const changed = await page.evaluate(() => document.getElementById('fig').setState({ head: 2 }));
  assert.equal(changed.head, 2);
  await settled(frame);
  assert.equal(await page.evaluate(() => window.changes), before + 1, 'one statechange for one change');
  const ignored = await page.evaluate(() => document.getElementById('fig').setState({ layer: 99 }));
  assert.equal(ignored.layer, changed.layer, 'layer 99 of a small model is ignored, not clamped');

  // A thumbnail clicked in the grid opens its map, says so, and offers the way back; no history entry.
  await frame.locator('.head-grid .thumb').nth(1).click();
  await frame.waitForSelector('.view-attention');
  await settled(frame);
  const back = frame.locator('.embed-back');
  assert.ok(await back.isVisible(), 'a line says the figure was changed');
  assert.match(await back.innerText(), /Changed from the figure \(Head grid\)\.\s+← Back to Head grid/);
  assert.equal(await page.evaluate(() => history.length), entries, 'the click added no entry to the post’s history');
  await page.locator('#fig').screenshot({ path: join(ROOT, 'artifacts', 'screenshots', 'share-post-figure-changed.png') });
  await back.locator('button').click();
  await frame.waitForSelector('.view-grid');
  await settled(frame);
  assert.equal(await back.isVisible(), false, 'back at the figure, the line is gone');
  assert.equal((await page.evaluate(() => document.getElementById('fig').getState())).view, 'grid');
  // A new state attribute moves the figure without a history entry either.
  await page.evaluate((s) => document.getElementById('fig').setAttribute('state', s), attention.replace(/&amp;/g, '&'));
  await page.waitForFunction(() => document.getElementById('fig').getState()?.view === 'attention', null, { timeout: 90_000 });
  assert.equal(await page.evaluate(() => history.length), entries, 'the attribute change added no entry');
  await screenshot(page, 'share-post-figure');

  // setState on a figure far below the screen resolves: it is loaded then.
  const far = await page.evaluate(async () => {
    const lazy = document.getElementById('lazy');
    const state = await lazy.setState({ head: 1 });
    return { head: state.head, top: lazy.getBoundingClientRect().top };
  });
  assert.equal(far.head, 1);
  assert.ok(far.top > 900, `off-screen when it resolved (${far.top})`);
  // Its height changed at most once from what it reserved, when its figure had drawn.
  await page.locator('#lazy').scrollIntoViewIfNeeded();
  await settled(await frameOf('#lazy'));
  await page.waitForTimeout(1000);
  const heights = await page.evaluate(() => window.heights);
  assert.ok(new Set(heights.slice(1)).size <= 1 && heights[0] === 640, `reserved 640 px, then one height: ${heights}`);
  assert.equal(await page.evaluate(() => history.length), entries);
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();

  // attnscope's site unreachable: a figure is never a 0 px gap; it shows its caption and a link.
  posts.set('/element.js', await readFile(join(ROOT, 'www', 'element.js'), 'utf8'));
  posts.set('/post-offline.html', body(`${host()}/element.js`).replace(/<attn-scope id="(\w+)" /g, `<attn-scope id="$1" src="${server.url}index.html" `));
  posts.set('/post-offline-all.html', body(`${server.url}element.js`));
  const offline = await freshPage(null, { viewport: { width: 720, height: 900 } });
  await offline.route(`${server.url}**`, (route) => route.abort());
  for (const post of ['/post-offline.html', '/post-offline-all.html']) {
    await offline.goto(`${host()}${post}`);
    await offline.locator('#lazy').scrollIntoViewIfNeeded();
    const fallback = offline.locator('#lazy a');
    await fallback.waitFor({ state: 'visible', timeout: 30_000 });
    assert.equal(await fallback.getAttribute('href'), `${server.url}#${attention.replace(/&amp;/g, '&')}`);
    const box = await offline.locator('#lazy').boundingBox();
    assert.ok(box.height >= 20, `${post}: the figure keeps a height (${box.height} px)`);
    // Its caption shows (the element's child, in its fallback box or as the page's own text).
    await offline.locator('#fig').getByText('Head grid').waitFor({ state: 'visible', timeout: 30_000 });
    assert.ok((await offline.locator('#fig').boundingBox()).height > 0, `${post}: the caption's figure is not 0 px`);
    if (post === '/post-offline.html') {
      // The element's own script there: a figure without a fallback of its own gets a plain box.
      await offline.locator('#bare').scrollIntoViewIfNeeded();
      await offline.waitForFunction(() => document.getElementById('bare').hasAttribute('offline'), null, { timeout: 30_000 });
      const bare = await offline.evaluate(() => document.getElementById('bare').shadowRoot.querySelector('.fallback').innerText);
      assert.match(bare, /Bare figure[^]*Open this figure in attnscope/);
      assert.equal((await offline.locator('#bare').boundingBox()).height, 300);
      await screenshot(offline, 'share-post-offline');
    }
  }
  await offline.context().close();
});

test('after one visit the page reloads offline from its service worker, and online from its copies', async () => {
  const page = await freshPage(`${server.url}${randomModel({ view: 'attention' })}`);
  await stableUrl(page);
  // The first visit fills the cache: the page, its modules, the worker, the wasm and the tokenizer,
  // each kept under the hash the release manifest gives it.
  const keptNow = () =>
    page.evaluate(async () => {
      if (!navigator.serviceWorker.controller) return false;
      const keys = (await (await caches.open('attnscope-app')).keys()).map((r) => new URL(r.url));
      const paths = keys.map((u) => u.pathname);
      const manifest = await (await fetch('./release.json')).json();
      // Everything the page loaded that the manifest names, and these.
      const loaded = performance.getEntriesByType('resource').map((e) => new URL(e.name)).filter((u) => u.origin === location.origin && u.pathname.slice(1) in manifest.files).map((u) => u.pathname);
      const needed = [...loaded, '/index.html', '/app.js', '/state.js', '/worker.js', '/style.css', '/minimind/tokenizer.json'];
      // The core's build the worker chose: pkg-threads on an isolated page, else pkg-relaxed where the
      // browser has relaxed-simd, pkg otherwise.
      const core = ['/pkg', '/pkg-relaxed', '/pkg-threads'].some((dir) => paths.includes(`${dir}/attnscope.js`) && paths.includes(`${dir}/attnscope_bg.wasm`));
      return core && needed.every((p) => paths.includes(p)) && keys.map((u) => `${u.pathname}${u.search}`);
    });
  let keys;
  for (const t0 = Date.now(); !(keys = await keptNow()); await page.waitForTimeout(250)) {
    assert.ok(Date.now() - t0 < 60_000, 'the first visit is kept within a minute');
  }
  assert.ok(keys.length > 30, `${keys.length} files kept`);
  const manifest = await page.evaluate(() => fetch('./release.json').then((r) => r.json()));
  for (const key of keys.filter((k) => k !== '/release.json')) {
    const [path, hash] = key.slice(1).split('?release-file=');
    assert.equal(manifest.files[path], hash, `${path} is kept under the hash the manifest gives it`);
  }
  const before = await getState(page);
  const shot = await viewShot(page);

  await page.context().setOffline(true);
  await page.reload();
  await stableUrl(page);
  assert.equal(await page.evaluate(() => navigator.onLine), false);
  assert.deepEqual(await getState(page), before);
  assert.ok((await viewShot(page)).equals(shot), 'the same view, offline');
  await screenshot(page, 'share-offline');
  assert.deepEqual(page.consoleErrors, []);
  const uncached = await page.evaluate(() => fetch(`./never-cached-${Date.now()}.txt`).then(() => 'fetched', () => 'failed'));
  assert.equal(uncached, 'failed', 'the network really is off');
  page.consoleErrors.splice(0); // that fetch's own failure

  // Online again, the return visit takes every file of the app from the service worker's copies.
  await page.context().setOffline(false);
  // What went to the network: the page's own requests that no service worker answered, and the
  // service worker's.
  const fromNetwork = [];
  page.on('response', (response) => {
    if (!response.fromServiceWorker()) fromNetwork.push(new URL(response.url()).pathname);
  });
  const bySw = (request) => request.serviceWorker() && fromNetwork.push(`sw:${new URL(request.url()).pathname}`);
  page.context().on('request', bySw);
  await page.reload();
  await stableUrl(page);
  assert.ok((await viewShot(page)).equals(shot), 'the same view, online again');
  page.context().off('request', bySw);
  const app = fromNetwork.filter((p) => p.replace(/^(sw:)?\//, '') in manifest.files || p === '/' || p === 'sw:/');
  assert.deepEqual(app, [], `no file of the app came from the network (${fromNetwork.join(', ')})`);
  assert.ok(fromNetwork.includes('sw:/release.json'), `the service worker asked for the manifest (${fromNetwork.join(', ')})`);
  // What the manifest does not name (here a note beside the built-in model) is left to the network.
  assert.equal(await page.evaluate(() => fetch('./models/builtin/README.md').then((r) => r.status)), 200);
  const notes = await page.evaluate(async () => (await (await caches.open('attnscope-app')).keys()).filter((r) => r.url.endsWith('.md')).length);
  assert.equal(notes, 0, 'a file outside the manifest is not kept');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a new release reaches a returning reader on the next visit, and its old copies are dropped', async () => {
  // A copy of the site, changed between two visits as a deploy changes it.
  const site = await mkdtemp(join(tmpdir(), 'attnscope-release-'));
  await cp(join(ROOT, 'www'), site, { recursive: true, filter: (src) => !/\.gguf$/i.test(src) });
  const gguf = 'models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf'; // 98 MB: linked, not copied
  await symlink(join(ROOT, 'www', gguf), join(site, gguf)).catch(() => {});
  const copy = await startServer({ root: site });
  try {
    const page = await freshPage(`${copy.url}${randomModel({ view: 'attention' })}`);
    await stableUrl(page);
    const styleKeys = () => page.evaluate(async () => (navigator.serviceWorker.controller ? (await (await caches.open('attnscope-app')).keys()).map((r) => new URL(r.url)).filter((u) => u.pathname === '/style.css').map((u) => u.search) : []));
    for (const t0 = Date.now(); (await styleKeys()).length === 0; await page.waitForTimeout(250)) {
      assert.ok(Date.now() - t0 < 60_000, 'the first visit is kept within a minute');
    }
    const mark = () => page.evaluate(() => getComputedStyle(document.body).getPropertyValue('--release-mark').trim());
    assert.equal(await mark(), '');
    const css = join(site, 'style.css');
    await writeFile(css, `${await readFile(css, 'utf8')}\nbody { --release-mark: 2; }\n`);
    await page.reload();
    await stableUrl(page);
    assert.equal(await mark(), '2', 'the changed file, on the first visit after the release');
    const manifest = await page.evaluate(() => fetch('./release.json').then((r) => r.json()));
    for (const t0 = Date.now(); JSON.stringify(await styleKeys()) !== JSON.stringify([`?release-file=${manifest.files['style.css']}`]); await page.waitForTimeout(250)) {
      assert.ok(Date.now() - t0 < 30_000, `one copy of style.css, the new one: ${await styleKeys()}`);
    }
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
  } finally {
    await copy.close();
    await rm(site, { recursive: true, force: true });
  }
});

test('an embed with heads knocked out names them in one short line, without the buttons that would change the figure', async () => {
  const page = await freshPage(`${server.url}#view=attention&ablate=1.3&embed=1`, { viewport: { width: 700, height: 450 } });
  await page.waitForFunction(() => window.attnscope?.app?.phase === 'ready', null, { timeout: 120_000 });
  await settled(page);
  const bar = page.locator('.ablation-bar');
  assert.equal((await bar.innerText()).replace(/\s+/g, ' '), 'Heads knocked out (1): L1 H3');
  assert.equal(await bar.locator('a, button').filter({ visible: true }).count(), 0, 'no “Before and after”, no “Clear all”');
  assert.ok((await bar.boundingBox()).height <= 30, 'one line');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('an embed with its view controls hidden says which head (and stage) it shows, where the view shows one', async () => {
  const says = async (hash) => {
    const page = await freshPage(`${server.url}${hash}&embed=1&hide=input,config,tabs,toolbar`, { viewport: { width: 700, height: 450 } });
    await page.waitForFunction(() => window.attnscope?.app?.phase === 'ready', null, { timeout: 120_000 });
    await settled(page);
    const caption = page.locator('#embed-caption');
    const text = (await caption.isVisible()) ? await caption.innerText() : null;
    assert.deepEqual(page.consoleErrors, []);
    await page.context().close();
    return text;
  };
  assert.equal(await says('#view=attention&layer=1&head=3&stage=probs&lang=en'), 'Layer 1, head 3 · weights');
  assert.equal(await says('#view=masks&layer=0&head=2&lang=zh'), '层 0 头 2');
  assert.equal(await says('#view=grid&lang=en'), null, 'every head: no caption');
});

// A post's figures, as its author embeds them with every hide flag set ("figure only"): one head's
// attention map, the head grid, the Q·K lesson, a knock-out and the logit lens, in a blog's 700 px
// column and on a 390 px phone.
const FIGURES = [
  { name: 'attention', state: { view: 'attention', layer: 1, head: 2 } },
  { name: 'grid', state: { view: 'grid' } },
  { name: 'lesson', state: { view: 'lessons', lesson: 'qk' } },
  { name: 'ablate', state: { view: 'ablate', ablate: [[2, 4]] } },
  { name: 'lens', state: { view: 'lens' } },
];
const COLUMNS = [700, 390];
const FIGURE_ONLY = ['input', 'config', 'tabs', 'toolbar', 'prose'];
// What the views say to explain or instruct (their first words, before any number): none of it is in
// a figure-only embed or in an exported figure.
const PROSE = ['grid.explain', 'grid.rolesExplain', 'role.means.previous', 'role.means.first', 'role.weakMark', 'grid.legendKnock', 'probe.title', 'probe.run', 'ablate.explain', 'ablate.boardHint', 'ablate.klLead', 'ablate.changedLead', 'ablate.changedViews', 'lens.explain', 'lens.scrolled', 'lens.detailNote', 'lens.notFinal', 'lens.toAttribution', 'attention.explain.probs', 'attention.axes', 'lesson.qk.intro', 'lesson.editHint', 'lessons.door.heading', 'lessons.sources', 'diff.klExplain'].map((key) => EN[key].split('{')[0].trim());

// An embedded figure as its reader sees it: how tall it really is (the iframe's height, less the blank
// under the view's content, plus what the view would scroll), what is wider than its box and whether
// a scroll cue says so just above it, and the view's visible text.
function figureSeen(frame) {
  return frame.evaluate(() => {
    const view = document.getElementById('view');
    const box = view.getBoundingClientRect();
    const shown = [...view.querySelectorAll('*')].filter((n) => n.checkVisibility() && n.getClientRects().length > 0);
    const bottom = Math.max(...shown.map((n) => n.getBoundingClientRect().bottom + parseFloat(getComputedStyle(n).marginBottom)));
    const wide = [view, ...shown]
      .filter((n) => n.clientWidth > 0 && n.scrollWidth > n.clientWidth + 1 && getComputedStyle(n).overflowX !== 'visible')
      .map((n) => {
        const cue = n.previousElementSibling;
        return { box: `${n.tagName.toLowerCase()}.${[...n.classList].join('.')}`, cue: cue?.matches('.scroll-cue') && cue.checkVisibility() ? cue.textContent : null };
      });
    const diff = document.querySelector('.prediction-diff');
    return {
      real: Math.round(innerHeight - box.bottom + bottom),
      height: innerHeight,
      viewScroll: view.scrollHeight - view.clientHeight,
      sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      wide,
      text: view.innerText,
      diffBottom: diff?.checkVisibility() ? diff.getBoundingClientRect().bottom : null,
    };
  });
}

test('figures embedded in a post: the share panel’s height fits what each shows at the column’s width, nothing is cut off unsaid, “figure only” is the figure, and exports are figures', async (t) => {
  const author = await freshPage(`${server.url}#view=attention`, { permissions: ['clipboard-read', 'clipboard-write'], acceptDownloads: true });
  await stableUrl(author);
  const snippets = [];
  for (const width of COLUMNS) {
    for (const { name, state } of FIGURES) {
      await author.evaluate((s) => window.attnscope.setState(s), { ...DEFAULTS, ...state, hide: FIGURE_ONLY });
      await stableUrl(author);
      // A lesson keeps its share panel behind its button, with the sentence and model panels.
      if (!(await author.locator('#share-embed').isVisible())) await author.click('#lessons-sidebar');
      assert.ok(await author.locator('#share-embed').isVisible(), `${name}: the share panel is in sight`);
      await author.fill('#share-width', String(width));
      const copied = async (button) => {
        await author.evaluate(() => navigator.clipboard.writeText(''));
        await author.click(button);
        // Measured first, then copied, and said.
        await author.locator('.share-note').filter({ hasText: /copied/ }).waitFor({ timeout: 90_000 });
        return author.evaluate(() => navigator.clipboard.readText());
      };
      const iframe = await copied('#share-embed');
      assert.match(await author.locator('.share-note').innerText(), new RegExp(`Embed code copied, ${width} × \\d+ px as measured`));
      const element = await copied('#share-element');
      const src = /src="([^"]+)"/.exec(iframe)[1].replace(/&amp;/g, '&');
      const height = Number(/ height="(\d+)"/.exec(iframe)[1]);
      assert.equal(Number(/ width="(\d+)"/.exec(iframe)[1]), width);
      // Both snippets: the <attn-scope> one loads the element's script and names the same state.
      const [, script, elementState, elementWidth, start] = /^<script src="([^"]+)"><\/script>\n<attn-scope state="([^"]+)" width="(\d+)" style="[^"]*\bheight:(\d+)px[^"]*" label="[^"]+">[^]*<\/attn-scope>$/.exec(element) ?? [];
      assert.equal(script, `${server.url}element.js`, element);
      assert.deepEqual([Number(elementWidth), Number(start)], [width, height]);
      const shared = await getState(author);
      assert.deepEqual((await decode(`#${elementState}`)).state, shared);
      assert.deepEqual((await decode(new URL(src).hash)).state, shared);
      snippets.push({ name, width, src, height, elementState, state: shared });

      // Exported from the author's page (once per figure): the figure, its legend and caption, as text.
      if (width !== COLUMNS[0]) continue;
      const svg = (await downloadOf(author, '#export-svg')).bytes.toString('utf8');
      const texts = await author.evaluate((s) => [...new DOMParser().parseFromString(s, 'image/svg+xml').querySelectorAll('text')].map((n) => n.textContent), svg);
      const all = texts.join('\n');
      for (const prose of PROSE) assert.ok(!all.includes(prose), `${name}: the export leaves out “${prose}”`);
      if (name === 'attention') {
        // Every token labels its row and its column, and each row's sum stands beside it, as SVG text.
        const pieces = await author.evaluate(() => window.attnscope.app.state.tokens.pieces.map((p) => p.replace(/ /g, '␣')));
        for (const piece of new Set(pieces)) assert.ok(texts.filter((s) => s === piece).length >= 2 * pieces.filter((p) => p === piece).length, `${name}: “${piece}” as text`);
        assert.ok(texts.includes('Σ row'));
        assert.ok(texts.filter((s) => s === '1').length >= pieces.length, `${name}: the row sums as text`);
      }
      // The logit lens exports every position, not the ones its box showed.
      if (name === 'lens') {
        const T = await author.evaluate(() => window.attnscope.app.state.tokens.ids.length);
        for (let i = 0; i < T; i++) assert.ok(texts.includes(String(i)), `${name}: position ${i}`);
      }
      await writeFile(join(ROOT, 'artifacts', 'exports', `figure-${name}.svg`), svg);
    }
  }
  assert.deepEqual(author.consoleErrors, []);
  await author.context().close();

  // The post: an <attn-scope> that grows to its figure in the phone's column (first: it loads only
  // once near the screen), and an iframe per column, each set to the snippet's link and height in turn.
  const first = (width) => snippets.find((s) => s.width === width);
  posts.set(
    '/figures.html',
    `<!doctype html><title>Figures</title><body style="margin:8px">
<script src="${server.url}element.js"></script>
<attn-scope id="fig" state="${first(390).elementState}" width="390"></attn-scope>
<iframe id="w700" src="${first(700).src}" width="700" height="${first(700).height}" style="border:0;display:block"></iframe>
<iframe id="w390" src="${first(390).src}" width="390" height="${first(390).height}" style="border:0;display:block"></iframe>
</body>`,
  );
  const page = await freshPage(`${host()}/figures.html`, { viewport: { width: 720, height: 1000 } });
  await page.waitForFunction(() => document.getElementById('fig').getState() !== null, null, { timeout: 90_000 });
  const frameOf = async (selector) => (await page.locator(selector).elementHandle()).contentFrame();
  const frames = { 700: await frameOf('#w700'), 390: await frameOf('#w390') };
  const elementFrame = page.frames().find((f) => f.url().startsWith(server.url) && f !== frames[700] && f !== frames[390]);
  const seen = [];
  for (const { name, width, src, height, elementState, state } of snippets) {
    await page.evaluate(([id, s, h]) => Object.assign(document.getElementById(id), { src: s, height: h }), [`w${width}`, src, height]);
    const frame = frames[width];
    // In sight, as a reader scrolls to it (a browser may hold back an offscreen frame's frames).
    await page.locator(`#w${width}`).scrollIntoViewIfNeeded();
    await frame.waitForFunction((s) => JSON.stringify(window.attnscope.getState()) === s, JSON.stringify(state), { timeout: 90_000, polling: 100 });
    await settled(frame);
    // Laid out once its last paints are done: the same twice over.
    let look = await figureSeen(frame);
    for (let again = await figureSeen(frame); again.real !== look.real; again = await figureSeen(frame)) look = again;
    seen.push({ name, width, suggested: height, real: look.real });
    assert.equal(look.height, height);
    assert.ok(Math.abs(look.real - height) <= 40, `${name} at ${width} px: the snippet's ${height} px against the figure's ${look.real} px`);
    assert.ok(look.viewScroll <= 2, `${name} at ${width} px: the view is not a scrolled box (${look.viewScroll} px hidden)`);
    assert.equal(look.sideways, 0, `${name} at ${width} px: the page does not scroll sideways`);
    for (const wide of look.wide) assert.ok(wide.cue, `${name} at ${width} px: ${wide.box} is wider than its box, and a cue says so`);
    for (const prose of PROSE) assert.ok(!look.text.includes(prose), `${name} at ${width} px: figure only, without “${prose}”`);
    // The knock-out's before and after, in sight without scrolling.
    if (name === 'ablate') assert.ok(look.diffBottom !== null && look.diffBottom <= look.height, `${name} at ${width} px: the prediction before and after is in sight (${look.diffBottom})`);
    await page.locator(`#w${width}`).screenshot({ path: join(ROOT, 'artifacts', 'screenshots', `share-figure-${name}-${width}.png`) });
    // <attn-scope> in the phone's column grows to the same figure's height, exactly its content's.
    if (width === 390) {
      await page.evaluate((s) => document.getElementById('fig').setAttribute('state', s), elementState);
      await page.waitForFunction((want) => {
        const now = document.getElementById('fig').getState();
        return now?.view === want.view && now.lesson === want.lesson && JSON.stringify(now.ablate) === JSON.stringify(want.ablate);
      }, state, { timeout: 90_000, polling: 100 });
      // In sight: a browser may hold back an offscreen frame's frames, and its size report with them.
      await page.locator('#fig').scrollIntoViewIfNeeded();
      await settled(elementFrame);
      // Grown once its figure has drawn: as tall as the figure, the same twice over.
      let grown = 0;
      let inside = null;
      for (let tries = 0, same = 0; same < 2 && tries < 100; tries++, await page.waitForTimeout(150)) {
        const last = grown;
        grown = await page.evaluate(() => document.getElementById('fig').getBoundingClientRect().height);
        inside = await figureSeen(elementFrame);
        same = grown === last && Math.abs(inside.real - grown) <= 2 ? same + 1 : 0;
      }
      assert.ok(Math.abs(inside.real - grown) <= 2 && inside.viewScroll <= 2, `${name}: <attn-scope> is as tall as its figure (${grown} px for ${inside.real} px, ${inside.viewScroll} px scrolled): ${inside.text.slice(0, 200)}`);
      assert.ok(Math.abs(grown - height) <= 40, `${name}: <attn-scope> at 390 px is ${grown} px, the snippet ${height} px: ${inside.text.slice(0, 200)}`);
    }
  }
  console.log(JSON.stringify(seen));
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});

test('a lesson shares and embeds without the sidebar: the Share panel opens under the lessons’ bar, copies the lesson’s link and snippet, and goes back to the sidebar', async () => {
  const page = await freshPage(`${server.url}#view=lessons&lesson=who`, { permissions: ['clipboard-read', 'clipboard-write'] });
  await stableUrl(page);
  const toggle = page.locator('.lesson-share-toggle');
  assert.equal(await toggle.innerText(), 'Share or embed this lesson');
  assert.equal(await page.locator('.sidebar').isVisible(), false, 'the lesson has the page’s width');
  const lessonTop = async () => (await page.locator('.lesson h2').boundingBox()).y;
  const before = await lessonTop();
  await toggle.click();
  assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
  assert.ok(await page.locator('.view-lessons .lesson-share #share-embed').isVisible(), 'the Share panel is under the bar');
  assert.equal(await page.locator('.sidebar').isVisible(), false, 'without opening the sidebar');
  await page.check('#share-hide-prose');
  await page.click('#share-embed');
  await page.locator('.share-note').filter({ hasText: /Embed code copied/ }).waitFor();
  const snippet = await page.evaluate(() => navigator.clipboard.readText());
  const src = snippet.match(/src="([^"]+)"/)[1].replace(/&amp;/g, '&');
  const { state } = await decode(hashOf(src.replace(/&embed=1$/, '')));
  assert.deepEqual([state.view, state.lesson, state.hide], ['lessons', 'who', ['prose']]);
  await toggle.click();
  assert.equal(await toggle.innerText(), 'Share or embed this lesson');
  assert.ok(Math.abs((await lessonTop()) - before) < 1, 'closed, the lesson is back where it was');
  // The sidebar's place keeps the panel: shown with the sidebar, and there again after another view.
  await page.locator('#lessons-sidebar').click();
  assert.ok(await page.locator('.sidebar #share-embed').isVisible());
  await page.locator('#lessons-sidebar').click();
  await toggle.click();
  await page.evaluate(() => window.attnscope.setState({ view: 'attention' }));
  await page.waitForSelector('.view-attention');
  assert.ok(await page.locator('.sidebar #share-embed').isVisible(), 'the view gone, the panel is back in the sidebar');
  assert.deepEqual(page.consoleErrors, []);
  await page.context().close();
});
