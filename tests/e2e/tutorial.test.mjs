// The tutorials' own examples in real Chromium (shared/seeds/000): whom 她 means (0.05 / 0.01 /
// 0.80 / 0.14), the Self-Attention 流程 step by step (scores → ÷ √d → softmax → × V, the printed
// 0.65 / 0.10 / 0.25 marked illustrative), "为什么输入相近的向量不一定最关注" through W_Q and W_K, the
// causal lesson's boolean mask and information leak, and the FFN's w1 / w3 / w2. Every number the
// core shows is recomputed here in plain JS (double precision) from the inputs read off the page;
// edits recompute; both languages (in English the tutorial's words translated, its original words one
// switch away); light, dark and phone screenshots: artifacts/screenshots/tutor-*.png.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cleanScreenshot, go, launch, openLesson, openPage, settled, softmax, startServer } from './helpers.mjs';

let server;
let browser;
let page;

before(async () => {
  server = await startServer();
  browser = await launch();
  page = await openPage(browser, `${server.url}#view=lessons&lesson=who`);
  await page.setViewportSize({ width: 1400, height: 1000 });
  await settled(page);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const shot = (name) => cleanScreenshot(page, name);

const lesson = (id) => openLesson(page, id);

// A matrix's cells as numbers, row by row: shown cells by data-value, editable ones by their input.
function matrix(locator) {
  return locator.locator('tbody tr').evaluateAll((rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => {
      const input = td.querySelector('input');
      if (input) return Number(input.value);
      return td.dataset.value === '-∞' ? -Infinity : Number(td.dataset.value);
    })),
  );
}
const table = (caption) => page.locator('table.editable', { has: page.locator(`caption:text-is("${caption}")`) });

async function edit(locator, r, c, text) {
  const input = locator.locator('tbody tr').nth(r).locator('input').nth(c);
  await input.fill(text);
  await page.keyboard.press('Tab');
}

const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
const matmul = (a, b) => a.map((row) => b[0].map((_, j) => dot(row, b.map((r) => r[j]))));
const transpose = (a) => a[0].map((_, j) => a.map((r) => r[j]));
const cosine = (a, b) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));

function near(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((v, i) => {
    if (Array.isArray(v)) near(v, expected[i], tol, `${what}[${i}]`);
    else assert.ok(Math.abs(v - expected[i]) <= tol, `${what}[${i}]: ${v} vs ${expected[i]}`);
  });
}

const verdicts = (scope) => scope.locator('table.compare tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.verdict));

// 她's weights and result from the page's own Q, K, V, computed here.
async function checkWho() {
  const [q] = await matrix(page.locator('table.editable').nth(0));
  const k = await matrix(page.locator('table.editable').nth(1));
  const v = await matrix(page.locator('table.editable').nth(2));
  const w = softmax(k.map((kj) => dot(q, kj) / 2));
  near((await matrix(page.locator('[data-matrix="scaled"] table')))[0], k.map((kj) => dot(q, kj) / 2), 1e-5, 'q·k / √4');
  near((await matrix(page.locator('[data-matrix="probs"] table')))[0], w, 1e-6, 'weights');
  near((await matrix(page.locator('[data-matrix="context"] table')))[0], matmul([w], v)[0], 1e-6, '她’s result');
  return w;
}

test('whom “she” (她) means: the core’s weights round to the tutorial’s 0.05 / 0.01 / 0.80 / 0.14, and her result is mostly Mary (小红)', async () => {
  const w = await checkWho();
  near(w.map((p) => Math.round(p * 100) / 100), [0.05, 0.01, 0.8, 0.14], 1e-9, 'rounded like the tutorial');
  assert.deepEqual(await verdicts(page.locator('.lesson')), ['agrees']);
  assert.equal(await page.locator('.answer').getAttribute('data-top'), 'Mary');
  assert.match(await page.locator('.walk-formula').innerText(), /output\[she\] = 0\.049×V\[John\] \+ 0\.010×V\[apple\] \+ 0\.802×V\[Mary\] \+ 0\.139×V\[happy\]/);
  assert.equal(await page.locator('.answer').innerText(), '“she” takes most from “Mary” (0.802); the tutorial: “mostly Mary’s information”.');
  await shot('tutor-who');
  // The tutorial's own words, one switch away: the same numbers, the tokens swapped back.
  await page.locator('#lesson-original').check();
  await page.waitForFunction(() => document.querySelector('.answer')?.dataset.top === '小红');
  await settled(page);
  assert.match(await page.locator('.walk-formula').innerText(), /output\[她\] = 0\.049×V\[小明\] \+ 0\.010×V\[苹果\] \+ 0\.802×V\[小红\] \+ 0\.139×V\[开心\]/);
  assert.deepEqual(await checkWho(), w);
  await page.locator('#lesson-original').uncheck();
  await page.waitForFunction(() => document.querySelector('.answer')?.dataset.top === 'Mary');
  await settled(page);
});

test('whom 她 means: an edit recomputes, and the numbers become “your numbers”', async () => {
  // 她's query stops looking for "female": 小明 and 小红 now match alike.
  await edit(page.locator('table.editable').nth(0), 0, 1, '0');
  await page.waitForFunction(() => document.querySelector('table.compare tr[data-row="0"]')?.dataset.verdict === 'yours');
  await settled(page);
  const w = await checkWho();
  assert.ok(Math.abs(w[0] - w[2]) < 1e-9 && w[0] > 0.15, `小明 and 小红 alike: ${w}`);
  await page.getByRole('button', { name: 'Back to the tutorial’s numbers' }).click();
  await page.waitForFunction(() => document.querySelector('table.compare tr[data-row="0"]')?.dataset.verdict === 'agrees');
  await settled(page);
});

// Every step of the walk from the page's Q, K, V, computed here.
async function checkFlow() {
  const [q, k, v] = await Promise.all(['Q', 'K', 'V'].map((c) => matrix(table(c).first())));
  const scores = matmul(q, transpose(k));
  const scaled = scores.map((row) => row.map((s) => s / 2));
  const probs = scaled.map(softmax);
  near(await matrix(page.locator('[data-matrix="scores"] table')), scores, 1e-6, 'scores');
  near(await matrix(page.locator('[data-matrix="scaled"] table')), scaled, 1e-6, 'scores / 2');
  near(await matrix(page.locator('[data-matrix="probs"] table')), probs, 1e-6, 'weights');
  near(await matrix(page.locator('[data-matrix="context"] table')), matmul(probs, v), 1e-6, 'weights × V');
  return { scores, probs };
}

test('the Self-Attention flow: Q·Kᵀ is the tutorial’s matrix, then ÷ 2, softmax and × V as computed here; 0.65 / 0.10 / 0.25 is marked illustrative', async () => {
  await lesson('flow');
  const { scores, probs } = await checkFlow();
  near(scores, [[0.8, 0.1, 0.3], [0.2, 0.5, 0.1], [0.9, 0.1, 0.7]], 1e-6, 'the tutorial’s step 2');
  assert.deepEqual(await verdicts(page.locator('[data-compare="scores"]')), ['agrees', 'agrees', 'agrees']);
  assert.deepEqual(await verdicts(page.locator('[data-compare="weights"]')), ['illustrative', 'illustrative', 'illustrative']);
  assert.match(await page.locator('[data-compare="weights"] tr[data-row="2"]').innerText(), /\[0\.65, 0\.10, 0\.25\]\s+\[0\.388, 0\.260, 0\.351\]/);
  near(probs[2], softmax([0.45, 0.05, 0.35]), 1e-6, '她');
  assert.match(await page.locator('[data-step="5"] .walk-formula').innerText(), /output\[she\] = 0\.388 × V\[Mary\] \+ 0\.260 × V\[very\] \+ 0\.351 × V\[she\]/);
  await shot('tutor-flow');
});

test('the Self-Attention flow: editing K recomputes every step and the comparison says “your numbers”', async () => {
  await edit(table('K').first(), 0, 0, '2');
  await page.waitForFunction(() => document.querySelector('[data-compare="scores"] tr[data-row="0"]')?.dataset.verdict === 'yours');
  await settled(page);
  const { scores } = await checkFlow();
  near([scores[0][0], scores[2][0]], [2, 2.1], 1e-6, 'column 小红 after the edit');
  assert.deepEqual(await verdicts(page.locator('[data-compare="weights"]')), ['yours', 'yours', 'yours']);
  await page.getByRole('button', { name: 'Back to the tutorial’s numbers' }).first().click();
  await page.waitForFunction(() => document.querySelector('[data-compare="scores"] tr[data-row="0"]')?.dataset.verdict === 'agrees');
  await settled(page);
});

// cos of the inputs, q·k and the weights of 她, from the page's x, W_Q, W_K, computed here.
async function checkClose() {
  const card = page.locator('[data-part="close-inputs"]');
  const [x, wq, wk] = await Promise.all(['x', 'W_Q', 'W_K'].map((c) => matrix(card.locator('table.editable', { has: page.locator(`caption:text-is("${c}")`) }))));
  const q = matmul(x, wq);
  const k = matmul(x, wk);
  near(await matrix(card.locator('[data-matrix="xq"] table')), q, 1e-6, 'Q = x @ W_Q');
  near(await matrix(card.locator('[data-matrix="xk"] table')), k, 1e-6, 'K = x @ W_K');
  const qk = k.map((kj) => dot(q[2], kj));
  const w = softmax(qk.map((s) => s / 2));
  const read = (col) => card.locator(`td[data-col="${col}"] output`).evaluateAll((o) => o.map((n) => Number(n.dataset.value)));
  near(await read('cos'), x.map((xj) => cosine(x[2], xj)), 1e-6, 'cos');
  near(await read('qk'), qk, 1e-6, 'q·k');
  near(await read('weight'), w, 1e-6, 'weights');
  return { cos: x.map((xj) => cosine(x[2], xj)), w, answer: card.locator('.answer') };
}

test('close inputs are not always attended to: “she” is closest to “Mary” but attends most to “very” through W_Q and W_K; an edit of W_K changes that', async () => {
  const { cos, w, answer } = await checkClose();
  assert.ok(cos[0] > 0.99 && cos[1] < 0.1, `cos ${cos}`);
  assert.ok(w[1] > w[0] && w[1] > w[2], `weights ${w}`);
  assert.equal(await answer.getAttribute('data-closest'), 'Mary');
  assert.equal(await answer.getAttribute('data-most'), 'very');
  assert.equal(await answer.innerText(), 'Of the other tokens, the input of “she” is closest to “Mary”, yet “she” attends most to “very”: W_Q and W_K decide what matches.');
  await page.locator('[data-part="close-inputs"]').screenshot({ path: 'artifacts/screenshots/tutor-close.png' });
  // W_K as the identity: k = x, and “she” now matches “Mary” best.
  const wk = page.locator('[data-part="close-inputs"] table.editable', { has: page.locator('caption:text-is("W_K")') });
  for (const [r, c, v] of [[0, 1, '0'], [1, 0, '0'], [2, 3, '0'], [3, 2, '0'], [0, 0, '1'], [1, 1, '1'], [2, 2, '1'], [3, 3, '1']]) await edit(wk, r, c, v);
  await page.waitForFunction(() => document.querySelector('[data-part="close-inputs"] .answer')?.dataset.most === 'Mary');
  await settled(page);
  const after = await checkClose();
  assert.ok(after.w[0] > after.w[1], `weights ${after.w}`);
  await page.getByRole('button', { name: 'Back to the tutorial’s numbers' }).last().click();
  await page.waitForFunction(() => document.querySelector('[data-part="close-inputs"] .answer')?.dataset.most === 'very');
  await settled(page);
});

test('the causal lesson: the tutorial’s True/False mask and the leak without it, from the lesson’s own scores', async () => {
  await lesson('causal');
  const scores = await matrix(page.locator('table.editable').first());
  const cells = await page.locator('[data-part="bool-mask"] tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  assert.deepEqual(cells, scores.map((row, i) => row.map((_, j) => (j > i ? 'True' : 'False'))));
  const leak = await matrix(page.locator('[data-matrix="leak"] table'));
  near(leak, scores.map(softmax), 1e-6, 'softmax without the mask');
  const leaked = await page.locator('[data-matrix="leak"] td.leaked').evaluateAll((tds) => tds.map((td) => `${td.dataset.r}${td.dataset.c}`));
  assert.deepEqual(leaked, ['01', '02', '03', '12', '13', '23']);
  const sums = await page.locator('.leak-rows li').evaluateAll((li) => li.map((n) => Number(n.dataset.leak)));
  near(sums, [0, 1, 2].map((r) => softmax(scores[r]).slice(r + 1).reduce((a, b) => a + b, 0)), 1e-6, 'weight on later tokens');
  // The lesson's switch off: the mask and the leak stay what they are.
  await page.locator('#lesson-causal').uncheck();
  await settled(page);
  near(await matrix(page.locator('[data-matrix="leak"] table')), leak, 0, 'leak with the switch off');
  assert.equal(await page.locator('[data-part="bool-mask"] td.cell-neginf').count(), 6);
  await page.locator('#lesson-causal').check();
  await settled(page);
  await page.locator('[data-part="bool-mask"]').screenshot({ path: 'artifacts/screenshots/tutor-causal-mask.png' });
  await page.locator('[data-part="leak"]').screenshot({ path: 'artifacts/screenshots/tutor-causal-leak.png' });
});

test('the FFN names the tutorial’s w1 / w3 / w2 as gate_proj / up_proj / down_proj, with its formula', async () => {
  await go(page, 'ffn');
  assert.match(await page.locator('[data-part="tutorial-names"]').innerText(), /w1, w3, w2 are MiniMind’s gate_proj, up_proj, down_proj/);
  assert.match(await page.locator('.view-ffn').innerText(), /output = self\.w2\(F\.silu\(self\.w1\(x\)\) \* self\.w3\(x\)\)/);
  await shot('tutor-ffn');
});

test('in 简体中文: the new lessons, the mask, the leak and the FFN, in light, dark and on a phone', async () => {
  await page.locator('#lang-switch').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  await settled(page);
  assert.match(await page.locator('[data-part="tutorial-names"]').innerText(), /教程里的 w1、w3、w2 就是 MiniMind 的 gate_proj、up_proj、down_proj/);
  await shot('tutor-zh-ffn');
  await lesson('who');
  assert.equal(await page.locator('.lesson h2').innerText(), 'Q、K、V：“她”指谁？');
  assert.deepEqual(await page.locator('table.editable').nth(1).locator('thead th').allInnerTexts(), ['K', '人名', '女性', '水果', '情绪']);
  assert.match(await page.locator('table.compare tr[data-row="0"]').innerText(), /\[0\.05, 0\.01, 0\.80, 0\.14\]\s+\[0\.049, 0\.010, 0\.802, 0\.139\]\s+两位小数一致/);
  await checkWho();
  await shot('tutor-zh-who');
  await lesson('flow');
  await checkFlow();
  assert.match(await page.locator('[data-compare="weights"] tr[data-row="2"]').innerText(), /教程数字仅作示意/);
  assert.match(await page.locator('[data-part="close-inputs"] .answer').innerText(), /“她”的输入和“小红”最接近，但“她”最关注的是“很”/);
  await shot('tutor-zh-flow');
  await lesson('causal');
  assert.match(await page.locator('[data-part="bool-mask"] tbody tr').nth(2).innerText(), /False\s+False\s+False\s+True/);
  assert.match(await page.locator('[data-part="bool-mask"] .hint').innerText(), /True（不能看）/);
  assert.match(await page.locator('[data-part="leak"] h3').innerText(), /不加掩码：信息泄露/);
  await shot('tutor-zh-causal');
  await page.emulateMedia({ colorScheme: 'dark' });
  for (const id of ['who', 'flow', 'causal']) {
    await lesson(id);
    await shot(`tutor-zh-${id}-dark`);
  }
  await page.setViewportSize({ width: 390, height: 844 });
  for (const id of ['who', 'flow', 'causal']) {
    await lesson(id);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${id}: no sideways scrolling on a phone (${overflow}px)`);
    await shot(`tutor-zh-${id}-phone-dark`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await shot('tutor-zh-causal-phone');
  await lesson('flow');
  await shot('tutor-zh-flow-phone');
  await page.setViewportSize({ width: 1400, height: 1000 });
});

test('no console errors', () => {
  assert.deepEqual(page.consoleErrors, []);
});
