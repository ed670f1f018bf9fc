// Heads explained: the head grid and the attention map name what each head does on the current input,
// as the core measures it (src/analysis/head_roles.rs), and the grid stays an overview on long inputs.
// Every role's scores are checked against this file's own computation from the run's
// layers.L.attn.probs; on the built-in model the head samples.json names for its Chinese previous-token sample
// must get that label on a Chinese sample. Screenshots: artifacts/screenshots/heads-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanScreenshot, go, launch, openPage, settled, startServer } from './helpers.mjs';

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

// A visit without a link: the built-in model on its first English sample.
async function builtinPage() {
  const page = await openPage(browser, new URL('index.html', server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  return page;
}

// The measures of one head, computed here from the probs alone: over the real query rows with at
// least two visible keys before them, the mean weight on the nearest visible key before (previous),
// on the row's own key (current) and on the earliest visible key (first), and the mean entropy over
// ln(visible keys) (spread), and the largest mean weight one key keeps (fixed).
function measure(probs, T, S, h, mask, causal) {
  const visible = (i, j) => (!causal || j <= i) && mask[j] !== 0;
  const sums = { previous: 0, current: 0, first: 0, spread: 0, rows: 0 };
  const measured = [];
  for (let i = 0; i < T; i++) {
    if (!visible(i, i)) continue;
    const before = [];
    for (let j = 0; j < i; j++) if (visible(i, j)) before.push(j);
    if (before.length < 2) continue;
    measured.push(i);
    const row = probs.subarray((h * T + i) * S, (h * T + i + 1) * S);
    let seen = 0;
    let entropy = 0;
    for (let j = 0; j < S; j++) {
      if (!visible(i, j)) continue;
      seen++;
      if (row[j] > 0) entropy -= row[j] * Math.log(row[j]);
    }
    sums.previous += row[before.at(-1)];
    sums.current += row[i];
    sums.first += row[before[0]];
    sums.spread += entropy / Math.log(seen);
    sums.rows++;
  }
  const n = sums.rows;
  if (!n) return null;
  // The key that keeps the most weight, on average over the measured rows that see it (a key seen by
  // fewer than half of them does not count).
  let fixed = 0;
  let fixedKey = -1;
  for (let j = 0; j < S; j++) {
    let sum = 0;
    let seen = 0;
    for (const i of measured) {
      if (!visible(i, j)) continue;
      sum += probs[(h * T + i) * S + j];
      seen++;
    }
    if (seen > 0 && 2 * seen >= n && sum / seen > fixed) [fixed, fixedKey] = [sum / seen, j];
  }
  return { previous: sums.previous / n, current: sums.current / n, first: sums.first / n, spread: sums.spread / n, fixed, fixedKey, rows: n };
}

// The role the measures make, by the thresholds head_stats.json names (0.5 strong, 0.3 weak) and
// 0.8 spread for a broad head; the score is the one behind the label.
function roleOf(m) {
  // The fixed key outranks the positions only by more than 0.01 (head_roles.rs's FIXED_MARGIN), so the
  // first key as the fixed one leaves the head first-token.
  const best = [['previous', m.previous], ['current', m.current], ['first', m.first]].reduce((a, b) => (b[1] > a[1] ? b : a));
  const [role, score] = m.fixed > best[1] + 0.01 ? ['fixed', m.fixed] : best;
  if (score >= 0.3) return { role, score };
  return { role: m.spread >= 0.8 ? 'broad' : 'mixed', score: m.spread };
}

// Every head of every layer, computed here from the page's tensors.
async function expectedRoles(page) {
  const { L, nH, causal, mask, T } = await page.evaluate(() => {
    const { app } = window.attnscope;
    return { L: app.model.num_hidden_layers, nH: app.model.num_attention_heads, causal: app.state.causal, mask: app.state.mask, T: app.state.tokens.ids.length };
  });
  const out = [];
  for (let l = 0; l < L; l++) {
    const probs = Float32Array.from(await page.evaluate((name) => window.attnscope.tensor(name).then(Array.from), `layers.${l}.attn.probs`));
    out.push(Array.from({ length: nH }, (_, h) => measure(probs, T, T, h, mask, causal)));
  }
  return out;
}

// The grid's thumbnails: layer, head, role and the badge's text and tooltip.
function thumbs(page) {
  return page.$$eval('.thumb', (nodes) =>
    nodes.map((n) => ({ layer: Number(n.dataset.layer), head: Number(n.dataset.head), role: n.dataset.role, text: n.querySelector('.role-badge').textContent, title: n.querySelector('.role-badge').title })),
  );
}

const numbers = (text) => (text.match(/\d+\.\d+/g) ?? []).map(Number);

function assertScoresShown(shown, expected) {
  for (const s of shown) {
    const m = expected[s.layer][s.head];
    const want = roleOf(m);
    assert.equal(s.role, want.role, `L${s.layer}H${s.head}: ${JSON.stringify(m)}`);
    const [score] = numbers(s.text);
    assert.ok(Math.abs(score - want.score) <= 0.0051, `L${s.layer}H${s.head}: the label says ${s.text}, the probs give ${want.score}`);
    const [previous, current, first, spread, fixed] = numbers(s.title);
    for (const [got, key] of [[previous, 'previous'], [current, 'current'], [first, 'first'], [spread, 'spread'], [fixed, 'fixed']]) {
      assert.ok(Math.abs(got - m[key]) <= 0.0051, `L${s.layer}H${s.head} ${key}: ${got} shown, ${m[key]} from the probs`);
    }
    assert.match(s.title, new RegExp(`\\b${m.rows}\\b`), 'the tooltip counts the rows measured');
  }
}

test('the head grid labels every head with its role and score, equal to a computation from attn.probs, with and without padding', async () => {
  const page = await openPage(browser, new URL('index.html#view=grid', server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.fill('#text', 'Every head of every layer looks somewhere, and the core says where.');
  await page.waitForFunction(() => window.attnscope.app.state.tokens.ids.length > 10);
  await settled(page);
  const shown = await thumbs(page);
  const model = await page.evaluate(() => window.attnscope.app.model);
  assert.equal(shown.length, model.num_hidden_layers * model.num_attention_heads);
  assertScoresShown(shown, await expectedRoles(page));

  // The core's own numbers, unrounded, against this file's.
  const core = await page.evaluate(() => window.attnscope.call('headRoles', { args: window.attnscope.app.args() }));
  const expected = await expectedRoles(page);
  for (const { layer, heads } of core) {
    for (const h of heads) {
      for (const key of ['previous', 'current', 'first', 'spread']) {
        assert.ok(Math.abs(h.scores[key] - expected[layer][h.head][key]) < 1e-4, `L${layer}H${h.head} ${key}: core ${h.scores[key]}, here ${expected[layer][h.head][key]}`);
      }
      assert.equal(h.scores.rows, expected[layer][h.head].rows);
    }
  }

  // A padding token (a chip clicked) leaves its row and its key out of every measure.
  await page.locator('.chip').nth(3).click();
  await page.waitForFunction(() => window.attnscope.app.state.mask[3] === 0);
  await settled(page);
  const padded = await expectedRoles(page);
  assert.equal(padded[0][0].rows, expected[0][0].rows - 1, 'the padded query row is not measured');
  assertScoresShown(await thumbs(page), padded);

  // Picking a role fades the other heads.
  const role = shown[0].role;
  await page.selectOption('.role-filter', role);
  const faded = await page.$$eval('.thumb', (nodes) => nodes.map((n) => [n.dataset.role, n.classList.contains('dimmed')]));
  assert.ok(faded.every(([r, dimmed]) => dimmed === (r !== role)), 'only the picked role stays bright');
  // A role no head has cannot be picked; the probe's two roles say to run it first.
  const now = await thumbs(page);
  const options = await page.$$eval('.role-filter option', (os) => os.map((o) => ({ value: o.value, text: o.textContent, disabled: o.disabled })));
  for (const o of options.filter((o) => o.value)) {
    const n = now.filter((s) => s.role === o.value).length;
    if (['induction', 'duplicate'].includes(o.value)) assert.match(o.text, /\(run the induction probe first\)$/);
    else assert.equal(o.text.endsWith(`(${n})`), true, o.text);
    assert.equal(o.disabled, n === 0 && o.value !== role, `${o.value}: ${n} heads`);
  }
  // A label pressed (no tooltip on a touch screen) says its every measure under the grid, and the
  // view stays: the label is not the thumbnail's way into the attention map.
  assert.ok(await page.locator('.grid-role-detail').isHidden());
  const badge = page.locator('.thumb[data-layer="1"][data-head="2"] .role-badge');
  await badge.click();
  const title = await badge.getAttribute('title');
  assert.equal(await page.locator('.grid-role-detail').innerText(), `Layer 1, head 2: ${title}`);
  assert.match(title, /^Mean weight on the previous token /);
  assert.equal(await page.evaluate(() => window.attnscope.getState().view), 'grid');
  await page.locator('.thumb[data-layer="0"][data-head="1"] .role-badge').press('Enter');
  assert.match(await page.locator('.grid-role-detail').innerText(), /^Layer 0, head 1: Mean weight/);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('on the built-in model, the Chinese previous-token sample shows its head as a previous-token head in the grid and the attention map, in English and Chinese', async () => {
  const page = await builtinPage();
  // The head comes from samples.json (tools/train/head_stats.py's pick), not from this test.
  const { layer, head, index } = await page.evaluate(async () => {
    const samples = await (await fetch('./models/builtin/samples.json')).json();
    const index = samples.zh.findIndex((s) => s.pattern === 'previous-token');
    return { ...samples.zh[index], index };
  });
  await page.locator('.sample[data-lang="zh"]').nth(index).click();
  await page.waitForFunction(() => /[\u4e00-\u9fff]/.test(window.attnscope.app.state.text));
  await go(page, 'grid');
  const shown = await thumbs(page);
  const named = shown.find((s) => s.layer === layer && s.head === head);
  assert.equal(named.role, 'previous', `L${layer}H${head} is labelled ${named.text}`);
  assert.match(named.text, /^previous-token/);
  assertScoresShown(shown, await expectedRoles(page));
  await cleanScreenshot(page, 'heads-grid-en');

  await page.evaluate(([l, h]) => window.attnscope.app.set({ layer: l, head: h }), [layer, head]);
  await go(page, 'attention');
  const role = await page.locator('.head-role').innerText();
  const m = (await expectedRoles(page))[layer][head];
  assert.match(role, /What this head does here:\s*previous-token/);
  assert.ok(role.includes(m.previous.toFixed(2)), `the attention map shows the score ${m.previous.toFixed(2)}: ${role}`);
  assert.match(role, /What to look for:\s*the weight gathers one step left of the diagonal: most tokens look mostly at the token just before them/);
  // On a score stage the same pattern is said to be the weights' (the scores are not yet weights).
  await page.evaluate(() => window.attnscope.app.set({ stage: 'raw' }));
  await settled(page);
  assert.match(await page.locator('.head-role').innerText(), /What to look for:\s*on the weights stage \(the last button\), the weight gathers one step left of the diagonal/);
  await page.evaluate(() => window.attnscope.app.set({ stage: 'probs' }));
  await settled(page);
  // Every view's head picker names the head by what it does (the masks view here).
  await go(page, 'masks');
  await page.waitForFunction((h) => / · previous-token/.test(document.querySelector(`select[name="head"] option[value="${h}"]`)?.textContent ?? ''), head);
  // Every head is named, the mixed ones too ("mixed, spread 0.56", as the grid labels them).
  await page.waitForFunction(() => [...document.querySelectorAll('select[name="head"] option')].every((o) => o.textContent.includes(' · ')));
  const mixed = (await expectedRoles(page))[layer].findIndex((r) => r && roleOf(r).role === 'mixed');
  if (mixed >= 0) assert.match(await page.locator(`select[name="head"] option[value="${mixed}"]`).textContent(), / · mixed, spread \d\.\d\d$/);
  // The picker says what its number is: a mean weight, and for a fixed-token head the token it keeps to.
  assert.match(await page.locator(`select[name="head"] option[value="${head}"]`).textContent(), new RegExp(` · previous-token(?: \\(weak\\))?, mean weight ${m.previous.toFixed(2)}$`));
  const roles = await expectedRoles(page);
  const pieces = await page.evaluate(() => window.attnscope.app.state.tokens.pieces);
  const fixedHead = roles[layer].findIndex((r) => r && roleOf(r).role === 'fixed');
  if (fixedHead >= 0) {
    const text = await page.locator(`select[name="head"] option[value="${fixedHead}"]`).textContent();
    assert.ok(text.includes(`one fixed token, “${pieces[roles[layer][fixedHead].fixedKey].replace(/^ /, '␣')}”`), text);
  }
  await go(page, 'attention');
  await cleanScreenshot(page, 'heads-attention-en');

  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  const zh = await page.locator('.head-role').innerText();
  assert.match(zh, /这个头在这句话上做什么：\s*看前一个 token/);
  assert.match(zh, /看哪里：\s*权重集中在对角线左边一格，也就是说，大多数 token 主要在看/);
  await cleanScreenshot(page, 'heads-attention-zh');
  await go(page, 'grid');
  const zhThumb = (await thumbs(page)).find((s) => s.layer === layer && s.head === head);
  assert.match(zhThumb.text, /^看前一个 token/);
  await cleanScreenshot(page, 'heads-grid-zh');

  // A head resting on the first token says why the first column is bright, and offers the heads that
  // do something else on this sentence, strongest first, from the same measures as the grid's labels.
  const zhShown = await thumbs(page);
  const resting = zhShown.find((s) => s.role === 'first');
  assert.ok(resting, 'the built-in model has a head resting on the first token');
  await page.evaluate(([l, h]) => window.attnscope.app.set({ layer: l, head: h }), [resting.layer, resting.head]);
  await go(page, 'attention');
  assert.match(await page.locator('.head-role-look').innerText(), /为什么第一列这么亮？[\s\S]*注意力汇聚点/);
  const offered = await page.locator('.head-role-others button').evaluateAll((bs) => bs.map((b) => [Number(b.dataset.layer), Number(b.dataset.head)]));
  const clear = zhShown.filter((s) => ['previous', 'current', 'fixed'].includes(s.role));
  assert.ok(offered.length > 0 && offered.length <= 3);
  for (const [l, h] of offered) assert.ok(clear.some((s) => s.layer === l && s.head === h), `L${l}H${h} has a clear role in the grid`);
  await page.locator('.head-role-others button').first().click();
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [window.attnscope.getState().layer, window.attnscope.getState().head]), offered[0]);
  assert.equal(await page.locator('.head-role-others').count(), 0, 'a head with a role of its own offers no others');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('an input with fewer than four measurable rows labels no head: each is too short to tell, and says why', async () => {
  const page = await openPage(browser, new URL('index.html#view=grid', server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  // Typed once the built-in model is in: this test is about the labels, not typing during the load.
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  // "a b c" after BOS is four tokens or so: a couple of rows with two tokens before them.
  await page.fill('#text', 'a b c');
  await page.waitForFunction(() => window.attnscope.app.state.text === 'a b c');
  await settled(page);
  const core = await page.evaluate(() => window.attnscope.call('headRoles', { args: window.attnscope.app.args() }));
  const rows = core[0].heads[0].scores.rows;
  assert.ok(rows > 0 && rows < 4, `${rows} rows measured`);
  assert.ok(core[0].heads.some((h) => h.role), 'the core names a role on so few rows');
  const labels = await page.locator('.thumb .role-badge').allInnerTexts();
  assert.ok(labels.length > 0 && labels.every((l) => l === 'too short to tell'), labels.join(' | '));
  assert.match(await page.locator('.thumb .role-badge').first().getAttribute('title'), /fewer than 4, too few to tell a habit/);
  // Said once above the grid too, with the input's tokens counted, and the padding when there is some.
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  assert.equal(await page.locator('.grid-unmeasured').innerText(), `No head is labelled here: this input has only ${T} tokens. A head’s habit is read from the query rows with at least two tokens before them, and it takes 4 such rows to tell one. Type a longer sentence.`);
  await page.locator('.chip[data-index="1"]').click();
  await settled(page);
  assert.match(await page.locator('.grid-unmeasured').innerText(), new RegExp(`only ${T - 1} real tokens \\(1 padded, not counted\\)`));
  await page.locator('.chip[data-index="1"]').click();
  await settled(page);
  // Longer, and the labels come back.
  await page.fill('#text', 'a b c d e f g h');
  await page.waitForFunction(() => window.attnscope.app.state.text === 'a b c d e f g h');
  await settled(page);
  assert.ok((await page.locator('.thumb .role-badge').allInnerTexts()).every((l) => l !== 'too short to tell'));
  assert.ok(await page.locator('.grid-unmeasured').isHidden(), 'heads labelled: no note');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('at 400+ tokens the grid keeps its thumbnail size, stays within the viewport width and redraws every thumbnail', async () => {
  const page = await builtinPage();
  await go(page, 'grid');
  const short = await page.$$eval('.thumb', (nodes) => nodes.map((n) => n.getBoundingClientRect().width));
  const text = await page.evaluate(async () => {
    const samples = await (await fetch('./models/builtin/samples.json')).json();
    // About 1,800 characters of English samples: over 400 tokens (English runs 2.4-4 characters a token
    // here) however many samples there are.
    const joined = samples.en.map((s) => s.text).join(' ');
    return Array(Math.ceil(1800 / joined.length)).fill(joined).join(' ');
  });
  await page.fill('#text', text);
  await page.waitForFunction(() => window.attnscope.app.state.tokens.ids.length >= 400, null, { timeout: 60_000 });
  await settled(page);
  const T = await page.evaluate(() => window.attnscope.app.state.tokens.ids.length);
  const geometry = await page.evaluate(() => ({
    viewport: innerWidth,
    page: document.documentElement.scrollWidth,
    box: document.querySelector('.grid-scroll').getBoundingClientRect().right,
    thumbs: [...document.querySelectorAll('.thumb')].map((n) => n.getBoundingClientRect().width),
    canvases: [...document.querySelectorAll('.thumb canvas')].map((c) => c.getBoundingClientRect().width),
  }));
  assert.ok(geometry.page <= geometry.viewport, `the page is ${geometry.page} px wide in a ${geometry.viewport} px viewport`);
  assert.ok(geometry.box <= geometry.viewport, 'the grid ends inside the viewport');
  assert.deepEqual(geometry.thumbs, short, `at ${T} tokens the thumbnails keep their size`);
  assert.ok(Math.max(...geometry.canvases) <= short[0], 'each picture fits its thumbnail');

  // A redraw (the stage switched, tensors already fetched) draws every thumbnail again; how fast it
  // reaches the screen is a benchmark, not a test (tools/bench/grid_long.mjs, BENCHMARKS.md).
  await page.evaluate(async () => {
    const { app, settled } = window.attnscope;
    app.set({ stage: 'scores' });
    await settled();
    app.set({ stage: 'probs' });
    await settled();
  });
  assert.equal(await page.locator('.thumb canvas').count(), geometry.canvases.length, 'the redraw keeps every thumbnail');

  // Detail is one click away: a thumbnail opens its head at full resolution in the attention map.
  await page.locator('.thumb[data-layer="3"][data-head="4"] canvas').click({ position: { x: 20, y: 20 } });
  await page.waitForSelector('.view-attention');
  await settled(page);
  assert.deepEqual(await page.evaluate(() => [window.attnscope.app.state.layer, window.attnscope.app.state.head]), [3, 4]);
  await go(page, 'grid');
  await cleanScreenshot(page, 'heads-grid-long');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('on a phone, in Chinese, every head’s label in the grid keeps to two lines; a weak role is marked, not spelled out', async () => {
  const page = await openPage(browser, new URL('index.html#view=grid&lang=zh', server.url).href);
  await page.setViewportSize({ width: 390, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  // The lines a badge's text is laid out on: the distinct tops of its text's boxes (at 64 px
  // thumbnails "盯住同一个 token（弱）0.32" took three or four).
  const badges = await page.$$eval('.thumb .role-badge', (nodes) =>
    nodes.map((n) => {
      const range = document.createRange();
      range.selectNodeContents(n);
      return { text: n.textContent, weak: n.classList.contains('weak'), lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
    }),
  );
  const model = await page.evaluate(() => window.attnscope.app.model);
  assert.equal(badges.length, model.num_hidden_layers * model.num_attention_heads);
  // The grid scrolls sideways in its own box, its right edge fading where more heads lie beyond.
  await page.waitForFunction(() => document.querySelector('.view-grid .grid-scroll').dataset.fade === 'right');
  // And says so in words above it, with the heads per layer.
  assert.equal(await page.locator('.view-grid .grid-scroll-note').innerText(), `每层有 ${model.num_attention_heads} 个头，这里放不下全部：左右滑动这张网格可以看到其余的头。`);
  assert.ok(badges.every((b) => b.lines <= 2), JSON.stringify(badges.filter((b) => b.lines > 2)));
  // Weak: a role by a mean weight from 0.3 to under 0.5, as the core's thresholds (tests/builtin.rs).
  const shown = await thumbs(page);
  const expected = await expectedRoles(page);
  shown.forEach((s, k) => {
    const want = roleOf(expected[s.layer][s.head]);
    const weak = !['broad', 'mixed'].includes(want.role) && want.score < 0.5;
    assert.equal(badges[k].weak, weak, `L${s.layer}H${s.head} ${badges[k].text}`);
    assert.ok(!badges[k].text.includes('弱'), badges[k].text);
  });
  assert.ok(badges.some((b) => b.weak), 'the built-in model has weak heads on this sentence');
  await cleanScreenshot(page, 'heads-grid-zh-phone');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a heatmap’s index ticks stay inside its canvas: a tick on the last column is not cut off', async () => {
  const page = await builtinPage();
  // Column counts around the built-in model's hidden size (192, whose "190" was cut), each drawn
  // 640 px wide; the ones whose last tick falls on one of the last two columns are the ones that
  // can be cut.
  const drawn = await page.evaluate(async () => {
    const { heatmap, paintAll } = await import('./parts/heatmap.js');
    const { sequential } = await import('./parts/color_scale.js');
    const box = document.createElement('div');
    box.style.width = '640px';
    document.body.append(box);
    const out = [];
    for (let cols = 150; cols <= 200; cols++) {
      const map = heatmap();
      box.append(map.node);
      map.update({ cells: { data: new Float32Array(4 * cols).fill(0.5), rows: 4, cols, rowMask: null, maxCell: 3 }, scale: sequential(0, 1), labels: { rows: ['a', 'b', 'c', 'd'] }, interaction: { name: 'ticks', describe: () => [] } });
      paintAll([map]);
      const canvas = map.node.querySelector('canvas');
      out.push({ cols, width: canvas.getBoundingClientRect().width, ticks: canvas.dataset.ticks.split('\n').map((line) => line.split(' ')) });
      map.destroy();
      map.node.remove();
    }
    box.remove();
    return out;
  });
  const atEdge = drawn.filter(({ cols, ticks }) => Number(ticks.at(-1)[0]) >= cols - 2);
  assert.ok(atEdge.length >= 3, `${atEdge.length} column counts put a tick on the last columns`);
  for (const { cols, width, ticks } of drawn) {
    for (const [text, left, right] of ticks) assert.ok(Number(left) >= 0 && Number(right) <= width, `${cols} columns: tick ${text} spans ${left}–${right} in a ${width} px canvas`);
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a head that rests on the first token over the sentence, followed on a row where it does not, says so under its habit', async () => {
  const page = await builtinPage();
  const found = await page.evaluate(async () => {
    const { app } = window.attnscope;
    const roles = await window.attnscope.call('headRoles', { args: app.args() });
    const T = app.state.tokens.ids.length;
    const last = T - 1;
    const out = { rests: null, spreads: null };
    for (let l = 0; l < roles.length; l++) {
      const probs = await window.attnscope.tensor(`layers.${l}.attn.probs`);
      roles[l].heads.forEach((r, h) => {
        if (r.role !== 'first' || r.scores.rows < 4) return;
        const w = probs[(h * T + last) * T];
        if (w < 0.3 && !out.spreads) out.spreads = { l, h, w };
        if (w >= 0.3 && !out.rests) out.rests = { l, h, w };
      });
    }
    return { ...out, last };
  });
  assert.ok(found.spreads, 'the default sentence has a resting head that spreads its last row');
  const open = async ({ l, h }) => {
    await page.evaluate(({ l, h, q }) => window.attnscope.app.set({ view: 'attention', layer: l, head: h, stage: 'probs', query: q }), { l, h, q: found.last });
    await settled(page);
  };
  await open(found.spreads);
  const pKey = found.spreads.w < 0.005 ? 'almost nothing \\(under 0\\.01\\) goes to “<\\|im_start\\|>”' : `only ${found.spreads.w.toFixed(2)} goes to “<\\|im_start\\|>”`;
  assert.match(await page.locator('.head-role-row-differs').innerText(), new RegExp(`^But in the row you picked, position ${found.last} \\(counting from 0\\) “.+”, this head (spreads its weight: ${pKey}, and no token gets more than 0\\.\\d\\d|looks elsewhere: ${pKey}, and the most, 0\\.\\d\\d, goes to “.+”)\\.$`));
  if (found.rests) {
    await open(found.rests);
    assert.equal(await page.locator('.head-role-row-differs').count(), 0, 'a row that rests says nothing more');
  }
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});
