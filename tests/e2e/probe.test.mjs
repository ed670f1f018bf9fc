// The induction probe in the head grid (src/analysis/induction.rs, www/parts/induction_probe.js):
// the scores on screen equal the core's and this file's own computation from the probe run's
// layers.L.attn.probs, read through window.attnscope.tensor with the probe's ids; the probe's map
// has the repeated sequence on its axes; "probe on" survives a link round trip and the scores are
// recomputed; the box says how many heads it finds (none, on the built-in model) before it lists the
// highest scores, and a listed head opens on the probe's map and knocks out from there. Screenshots: artifacts/screenshots/probe-grid-{en,zh}.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanScreenshot, launch, openPage, randomModel, readCell, settled, startServer } from './helpers.mjs';

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

// The core's probe, asked again as the page asks it (the same model, length, seed and first token,
// the model's BOS when the page's input starts with it, give the same sequence and scores).
function coreProbe(page) {
  return page.evaluate(() => {
    const { app, call } = window.attnscope;
    const first = app.state.bos && app.model.bos_token_id != null ? app.model.bos_token_id : null;
    return call('probe', { length: Math.min(32, Math.floor(Math.min(app.model.max_position_embeddings, 8192) / 2)), seed: 1, first });
  });
}

// Every head's scores computed here from the probe run's probs: the second copy's query k (position
// off + n + k) on the token after its first copy (off + k + 1) and on the first copy (off + k).
async function expectedScores(page, probe) {
  const { L, nH } = await page.evaluate(() => ({ L: window.attnscope.app.model.num_hidden_layers, nH: window.attnscope.app.model.num_attention_heads }));
  const n = probe.length;
  const T = probe.ids.length;
  const off = T - 2 * n;
  const args = { ids: probe.ids, attention_mask: null, prefix_len: 0, causal: true };
  const out = [];
  for (let l = 0; l < L; l++) {
    const probs = Float32Array.from(await page.evaluate(([name, a]) => window.attnscope.tensor(name, a).then(Array.from), [`layers.${l}.attn.probs`, args]));
    assert.equal(probs.length, nH * T * T);
    out.push(
      Array.from({ length: nH }, (_, h) => {
        let induction = 0;
        let duplicate = 0;
        for (let k = 0; k < n; k++) {
          const row = (h * T + off + n + k) * T;
          induction += probs[row + off + k + 1];
          duplicate += probs[row + off + k];
        }
        return { induction: induction / n, duplicate: duplicate / n, probs: probs.subarray(h * T * T, (h + 1) * T * T) };
      }),
    );
  }
  return out;
}

function assertSequence(probe) {
  const n = probe.length;
  const copy = probe.ids.slice(-n);
  assert.deepEqual(probe.ids.slice(-2 * n, -n), copy, 'two copies of the same tokens');
  assert.equal(new Set(copy).size, n, 'different random tokens');
  assert.equal(probe.pieces.length, probe.ids.length);
}

function assertCoreAgrees(probe, expected) {
  for (const { layer, heads } of probe.layers) {
    for (const h of heads) {
      const e = expected[layer][h.head];
      assert.ok(Math.abs(h.induction - e.induction) < 1e-5, `L${layer}H${h.head} induction: core ${h.induction}, here ${e.induction}`);
      assert.ok(Math.abs(h.duplicate - e.duplicate) < 1e-5, `L${layer}H${h.head} duplicate: core ${h.duplicate}, here ${e.duplicate}`);
      assert.equal(h.rows, probe.length);
      const top = Math.max(e.induction, e.duplicate);
      assert.equal(h.role, top >= 0.3 ? (e.induction >= e.duplicate ? 'induction' : 'duplicate') : null, `L${layer}H${h.head}`);
    }
  }
}

const numbers = (text) => (text.match(/\d+\.\d+/g) ?? []).map(Number);
const close = (shown, want, digits) => Math.abs(shown - want) <= 0.51 * 10 ** -digits + 1e-9;

// What the page shows: every thumbnail's role, label and tooltip, the best heads listed, the caption.
function shown(page) {
  return page.evaluate(() => ({
    thumbs: [...document.querySelectorAll('.thumb')].map((n) => ({ layer: Number(n.dataset.layer), head: Number(n.dataset.head), role: n.dataset.role, text: n.querySelector('.role-badge').textContent, title: n.querySelector('.role-badge').title })),
    best: [...document.querySelectorAll('.probe-head-score')].map((n) => ({ layer: Number(n.dataset.layer), head: Number(n.dataset.head), text: n.textContent })),
    caption: document.querySelector('.probe-caption')?.textContent ?? '',
    mapShown: !document.querySelector('.probe-map').hidden,
    button: document.querySelector('.probe-toggle').textContent,
  }));
}

// The page's probe checked whole: its sequence, the core's scores against the test's own from the
// probe run's attention weights, and what the grid shows. Returns both for the test's own checks.
async function assertProbe(page) {
  const probe = await coreProbe(page);
  assertSequence(probe);
  const expected = await expectedScores(page, probe);
  assertCoreAgrees(probe, expected);
  await assertShown(page, expected);
  return { probe, expected };
}

// The grid's labels and tooltips, the best heads and the caption against `expected`; live roles from
// the core's headRoles of the reader's sentence where the probe names none.
async function assertShown(page, expected) {
  const screen = await shown(page);
  const live = await page.evaluate(() => window.attnscope.call('headRoles', { args: window.attnscope.app.args() }));
  const liveRole = Object.fromEntries(live.flatMap(({ layer, heads }) => heads.map((h) => [`${layer}:${h.head}`, h.role ?? ''])));
  assert.equal(screen.thumbs.length, expected.length * expected[0].length);
  for (const s of screen.thumbs) {
    const e = expected[s.layer][s.head];
    const [induction, duplicate] = numbers(s.title);
    assert.ok(close(induction, e.induction, 2) && close(duplicate, e.duplicate, 2), `L${s.layer}H${s.head} tooltip ${s.title} vs ${e.induction}, ${e.duplicate}`);
    const top = Math.max(e.induction, e.duplicate);
    const want = top >= 0.3 ? (e.induction >= e.duplicate ? 'induction' : 'duplicate') : liveRole[`${s.layer}:${s.head}`];
    assert.equal(s.role, want, `L${s.layer}H${s.head}`);
    if (top >= 0.3) assert.ok(close(numbers(s.text)[0], top, 2), `L${s.layer}H${s.head} label ${s.text} vs ${top}`);
  }
  // The best heads by each score, in order, with three decimals.
  const ranked = (key) =>
    expected
      .flatMap((heads, l) => heads.map((x, h) => ({ layer: l, head: h, score: x[key] })))
      .sort((a, b) => b.score - a.score)
      .slice(0, 3);
  const listed = [...ranked('induction'), ...ranked('duplicate')];
  assert.deepEqual(screen.best.map((b) => [b.layer, b.head]), listed.map((b) => [b.layer, b.head]));
  screen.best.forEach((b, i) => assert.ok(close(numbers(b.text).at(-1), listed[i].score, 3), `${b.text} vs ${listed[i].score}`));
  // The caption names the selected head with its two scores.
  const { layer, head } = await page.evaluate(() => window.attnscope.getState());
  const e = expected[layer][head];
  assert.ok(screen.mapShown);
  const [induction, duplicate] = numbers(screen.caption);
  assert.ok(close(induction, e.induction, 3) && close(duplicate, e.duplicate, 3), `${screen.caption} vs ${e.induction}, ${e.duplicate}`);
  assert.ok(screen.caption.includes(String(layer)) && screen.caption.includes(String(head)));
  assert.equal(await page.evaluate(() => window.attnscope.app.state.probe), true, 'the probe is on');
}

test('the built-in model: the probe button scores every head, equal to the core and to attn.probs, and opens the best induction head', async () => {
  const page = await openPage(browser, new URL('index.html#view=grid&lang=en', server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  assert.equal((await shown(page)).button, 'Run the induction probe');
  assert.equal((await shown(page)).mapShown, false);
  assert.match(await page.locator('.probe-box').innerText(), /32 random tokens twice in a row/);
  const legendRoles = () => page.locator('.role-legend li[data-role]').evaluateAll((items) => items.map((li) => li.dataset.role));
  assert.deepEqual(await legendRoles(), ['previous', 'current', 'first', 'fixed', 'broad', 'mixed'], 'the probe\'s roles stay out of the key until it runs');

  await page.click('.probe-toggle');
  await page.waitForFunction(() => window.attnscope.app.state.probe === true);
  await settled(page);
  const { probe, expected } = await assertProbe(page);
  // The key now says what the two new labels' colours mean.
  assert.deepEqual((await legendRoles()).slice(-2), ['induction', 'duplicate']);
  assert.match(await page.locator('.role-legend li[data-role="induction"]').innerText(), /^induction on the probe’s repeat, looks at the token that came after this one last time$/);

  // The button opened the head with the highest induction score.
  const { layer, head } = await page.evaluate(() => window.attnscope.getState());
  const all = expected.flatMap((heads, l) => heads.map((x, h) => ({ l, h, score: x.induction })));
  const top = all.reduce((a, b) => (b.score > a.score ? b : a));
  assert.deepEqual([layer, head], [top.l, top.h]);
  console.log(`built-in model: best induction head L${top.l}H${top.h} ${top.score.toFixed(3)}`);

  // The probe's map: the repeated sequence on both axes, the cell on the induction stripe as in probs.
  const n = probe.length;
  const k = n >> 1;
  const [q, j] = [probe.ids.length - n + k, probe.ids.length - 2 * n + k + 1];
  const canvas = page.locator('.probe-map .heatmap-canvas');
  const cell = await readCell(page, canvas, q, j);
  assert.equal(Math.fround(Number(cell.value)), expected[layer][head].probs[q * probe.ids.length + j]);
  assert.ok(cell.text.includes(`${q} `) && cell.text.includes(`${j} `), cell.text);
  assert.equal(probe.pieces[q], probe.pieces[q - n], 'the second copy reads as the first');
  // Sixty-odd keys are counted by index, not by stacked tokens that run into one another; the
  // second copy's start is ruled and the two stripes run between dashed guides.
  assert.equal(await canvas.getAttribute('data-rotated-labels'), '');
  assert.match(await canvas.getAttribute('data-ticks'), /^0 /);
  const second = probe.ids.length - n;
  assert.equal(await canvas.getAttribute('data-guides'), [second, `upper ${n - 1} from ${second}`, `lower ${n} from ${second}`].join('\n'));
  assert.match(await page.locator('.probe-map').innerText(), new RegExp(`between the two dashed lines.*${n - 1} columns left of the diagonal`, 's'));
  if (probe.pieces.some((p) => p.startsWith(' '))) assert.match(await page.locator('.probe-map').innerText(), /␣ marks a space before a word/);
  // The future keys are hatched as the causal mask's, in the key and in the tooltip: not a learned 0.
  assert.match(await page.locator('.probe-map .legend').innerText(), /masked: a future token \(weight 0\)/);
  assert.match((await readCell(page, canvas, 0, 1)).text, /comes after the query, so the causal mask set its weight to 0/);
  await cleanScreenshot(page, 'probe-grid-en');

  // Chinese: the same numbers, in the tutorials' terms.
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  const zh = await shown(page);
  assert.equal(zh.button, '隐藏探针');
  assert.match(zh.caption, /^层 \d+ 的头 \d+ 在探针 token 上：归纳 \d\.\d{3}，同词回看 \d\.\d{3}$/);
  assert.match(await page.locator('.probe-box').innerText(), /归纳头看的是这个 token 上次出现时紧跟在它后面的那个 token/);
  assert.match(await page.locator('.role-legend li[data-role="duplicate"]').innerText(), /^同词回看 探针重复的那一遍里，看向这个 token 上次出现的位置$/);
  await assertShown(page, expected);
  await cleanScreenshot(page, 'probe-grid-zh');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('"probe on" is in the link, the scores are recomputed from it, and it turns off', async () => {
  const page = await openPage(browser, new URL('index.html#view=grid&lang=en&probe=1&layer=1&head=2', server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  assert.equal(await page.evaluate(() => window.attnscope.getState().probe), true);
  const probe = await coreProbe(page);
  const expected = await expectedScores(page, probe);
  await assertShown(page, expected);

  // The whole link (s3.…) carries probe: true and opens the same grid elsewhere.
  const link = await page.evaluate(() => window.attnscope.link());
  assert.match(new URL(link).hash, /^#s3\./);
  const again = await openPage(browser, link);
  await again.setViewportSize({ width: 1280, height: 900 });
  await again.waitForFunction(() => window.attnscope?.app.phase === 'ready', null, { timeout: 120_000 });
  await settled(again);
  assert.deepEqual(await again.evaluate(() => window.attnscope.getState()), await page.evaluate(() => window.attnscope.getState()));
  assert.deepEqual((await shown(again)).thumbs, (await shown(page)).thumbs);
  assert.deepEqual((await shown(again)).best, (await shown(page)).best);
  await again.close();

  // Off: no probe labels or map, and the link no longer says probe.
  await page.click('.probe-toggle');
  await page.waitForFunction(() => window.attnscope.app.state.probe === false);
  await settled(page);
  const off = await shown(page);
  assert.equal(off.mapShown, false);
  assert.equal(off.best.length, 0);
  assert.ok(off.thumbs.every((s) => s.role !== 'induction' && s.role !== 'duplicate' && !/On the probe/.test(s.title)));
  assert.equal(await page.evaluate(() => window.attnscope.getState().probe), false);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

// The verdict the box leads with: how many heads reach 0.3 by each score, counted here from the probs.
async function assertVerdict(page, expected) {
  const named = (key) => expected.flat().filter((x) => Math.max(x.induction, x.duplicate) >= 0.3 && (key === 'induction' ? x.induction >= x.duplicate : x.duplicate > x.induction)).length;
  const counts = { induction: named('induction'), duplicate: named('duplicate') };
  const verdict = await page.locator('.probe-verdict').evaluate((n) => ({ induction: Number(n.dataset.induction), duplicate: Number(n.dataset.duplicate), text: n.textContent }));
  assert.deepEqual({ induction: verdict.induction, duplicate: verdict.duplicate }, counts);
  if (counts.induction + counts.duplicate === 0) assert.match(verdict.text, /finds no induction or duplicate-token head in this model/);
  else assert.match(verdict.text, new RegExp(`finds ${counts.induction} induction and ${counts.duplicate} duplicate-token heads`));
  return counts;
}

test('the probe says what it found before listing scores; a listed head opens on the probe map and can be knocked out from there', async () => {
  const page = await openPage(browser, new URL('index.html#view=grid&lang=en&probe=1', server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  const expected = await expectedScores(page, await coreProbe(page));
  const counts = await assertVerdict(page, expected);
  // The built-in model has none (tests/builtin.rs): its highest scores are listed, not named as finds.
  assert.deepEqual(counts, { induction: 0, duplicate: 0 });
  assert.match(await page.locator('.probe-summary').innerText(), /^No head scores 0\.3 or more[^]*Highest induction scores:/);

  // The third head listed by duplicate-token score: a click puts it on the probe's map.
  const item = page.locator('.probe-summary .probe-head-item').nth(5);
  const [l, h] = await item.locator('.probe-head-score').evaluate((n) => [Number(n.dataset.layer), Number(n.dataset.head)]);
  await item.locator('.probe-head-score').click();
  await page.waitForFunction(([a, b]) => window.attnscope.getState().layer === a && window.attnscope.getState().head === b, [l, h]);
  await settled(page);
  const caption = await page.locator('.probe-caption').innerText();
  assert.ok(caption.startsWith(`Layer ${l}, head ${h} `), caption);
  const [induction, duplicate] = numbers(caption);
  assert.ok(close(induction, expected[l][h].induction, 3) && close(duplicate, expected[l][h].duplicate, 3), caption);
  // The map lies below the whole grid: the click brings it into sight, and the score clicked is marked.
  const mapTop = await page.locator('.probe-map').evaluate((n) => n.getBoundingClientRect().top);
  assert.ok(mapTop >= -1 && mapTop < 900 / 2, `the probe map starts ${mapTop} px down the 900 px window`);
  assert.equal(await item.locator('.probe-head-score').getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('.probe-summary .probe-head-score[aria-pressed="true"]').count(), await page.locator(`.probe-summary .probe-head-score[data-layer="${l}"][data-head="${h}"]`).count());
  // Only the finding is bold, not the paragraph that explains it.
  assert.match(await page.locator('.probe-verdict strong').innerText(), /^No head scores 0\.3 or more[^;]*;$/);
  // Its ⊘ knocks it out: the state, the bar over the view, the toggle pressed.
  await item.locator('.ablate-toggle').click();
  await page.waitForFunction(([a, b]) => JSON.stringify(window.attnscope.getState().ablate) === JSON.stringify([[a, b]]), [l, h]);
  await settled(page);
  assert.match(await page.locator('.ablation-bar').innerText(), new RegExp(`L${l} H${h}`));
  assert.equal(await page.locator(`.probe-summary .ablate-toggle[data-layer="${l}"][data-head="${h}"]`).first().getAttribute('aria-pressed'), 'true');

  // Chinese: the verdict in the tutorials' words.
  await page.click('#lang-switch');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  assert.match(await page.locator('.probe-verdict').innerText(), /^没有哪个头在任一项上达到 0\.3，所以探针在这个模型里没有找到归纳头或同词回看头/);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('any loaded model: a random model is probed the same way', async () => {
  const page = await openPage(browser, new URL(`index.html${randomModel({ view: 'grid', probe: '1' })}`, server.url).href);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'random', null, { timeout: 120_000 });
  await settled(page);
  const { expected } = await assertProbe(page);
  await assertVerdict(page, expected);
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('a head the probe names is labelled and coloured by its probe role, with both scores and its role on the sentence in the tooltip', async () => {
  const page = await openPage(browser, new URL(`index.html${randomModel({ view: 'grid' })}`, server.url).href);
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready', null, { timeout: 120_000 });
  await settled(page);
  // Hand-set probe scores (neither model here has such a head) through the grid's own merge and badge.
  const badges = await page.evaluate(async () => {
    const { withProbe } = await import('./parts/induction_probe.js');
    const { roleBadge } = await import('./parts/head_roles.js');
    const live = { role: 'previous', score: 0.61, strong: true, scores: { previous: 0.61, current: 0.1, first: 0.05, spread: 0.4, fixed: 0.2, fixed_key: 0, rows: 9 } };
    const probed = (induction, duplicate, role, strong) => ({ induction, duplicate, rows: 32, role, score: Math.max(induction, duplicate), strong });
    return [probed(0.72, 0.05, 'induction', true), probed(0.1, 0.34, 'duplicate', false), probed(0.12, 0.08, null, false)].map((p) => {
      const node = roleBadge(withProbe(live, p), ['a', 'b']);
      return { className: node.className, text: node.textContent, title: node.title };
    });
  });
  assert.equal(badges[0].className, 'role-badge role-induction');
  assert.equal(badges[0].text, 'induction, mean weight 0.72');
  assert.equal(badges[1].className, 'role-badge role-duplicate');
  assert.equal(badges[1].text, 'duplicate-token (weak), mean weight 0.34');
  assert.equal(badges[2].className, 'role-badge role-previous', 'no probe role: the role on the sentence');
  assert.equal(badges[2].text, 'previous-token, mean weight 0.61');
  for (const [b, [induction, duplicate]] of badges.map((b, i) => [b, [[0.72, 0.05], [0.1, 0.34], [0.12, 0.08]][i]])) {
    assert.deepEqual(numbers(b.title).slice(0, 3), [induction, duplicate, 0.61], b.title);
    assert.match(b.title, /over the second copy’s 32 tokens\. On your sentence: Mean weight on the previous token 0\.61/);
  }
  // Colours: the two probe roles have their own, distinct from every other role's.
  const colours = await page.evaluate(() =>
    ['previous', 'current', 'first', 'fixed', 'broad', 'induction', 'duplicate'].map((role) => {
      const node = document.createElement('span');
      node.className = `role-badge role-${role}`;
      document.body.append(node);
      const colour = getComputedStyle(node).borderLeftColor;
      node.remove();
      return colour;
    }),
  );
  assert.equal(new Set(colours).size, colours.length, colours.join(' '));
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});
