// The WebGPU path in the page: the backend choice, the GPU-against-CPU check, and the fallback to
// the CPU where the browser has no WebGPU adapter. WebGPU here is Chromium's SwiftShader.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { launch, openPage, screenshot, settled, startServer } from './helpers.mjs';

const status = (page) => page.locator('#status').innerText();
const note = (page) => page.locator('#gpu-note');

test('WebGPU runs the model, the status says so, and it matches the CPU within 1e-3', async (t) => {
  const server = await startServer();
  t.after(server.close);
  const browser = await launch();
  t.after(() => browser.close());
  const page = await openPage(browser, server.url);
  await settled(page);
  assert.match(await status(page), /^CPU · /, 'Auto stays on the CPU on a software adapter');

  await page.selectOption('#backend', 'gpu');
  await page.waitForFunction(() => /^WebGPU · /.test(document.getElementById('status').innerText), null, { timeout: 120_000 });
  await settled(page);
  assert.equal(await note(page).innerText(), '', 'no fallback message');
  const ms = Number((await status(page)).match(/WebGPU · ([\d.]+) ms/)[1]);
  t.diagnostic(`WebGPU run on SwiftShader: ${ms} ms`);

  await page.click('#gpu-check');
  await page.waitForFunction(() => document.getElementById('gpu-note').dataset.kind !== '' && document.getElementById('gpu-note').dataset.kind !== undefined, null, { timeout: 120_000 });
  const text = await note(page).innerText();
  t.diagnostic(text);
  assert.equal(await note(page).getAttribute('data-kind'), 'check', text);
  const worst = Number(await note(page).getAttribute('data-worst'));
  assert.ok(worst <= 1e-3, `worst relative error ${worst}: ${text}`);
  // A verdict, not a bare number: the bound is in its tooltip.
  assert.match(text, /^GPU = CPU ✓ worst relative error \d\.\d\de[-+]\d+$/);
  assert.match(await note(page).getAttribute('title'), /the GPU path is held to 1e-3/);
  // The note takes its room from the tagline: the language and theme buttons stay on the line.
  const top = async (selector) => Math.round((await page.locator(selector).boundingBox()).y);
  assert.equal(await top('#lang-switch'), await top('#gpu-check'), 'the top bar keeps one line with the note');
  assert.equal(await top('#theme-toggle'), await top('#gpu-check'));
  // The backend choice says what it is on screen, not only to a screen reader.
  assert.equal(await page.locator('label[for="backend"]').innerText(), 'Runs on');
  await screenshot(page, 'gpu-check');

  await page.selectOption('#backend', 'cpu');
  await page.waitForFunction(() => /^CPU · /.test(document.getElementById('status').innerText), null, { timeout: 60_000 });
  assert.deepEqual(page.consoleErrors, []);
});

test('without a WebGPU adapter, choosing WebGPU runs on the CPU and says why, in the reader’s language, not as an error', async (t) => {
  const server = await startServer();
  t.after(server.close);
  const browser = await launch({ webgpu: false });
  t.after(() => browser.close());
  const page = await openPage(browser, server.url);
  await settled(page);

  // The check itself, in Chinese: no English left on the page, no red.
  await page.evaluate(() => (location.hash = 'view=overview&lang=zh'));
  await page.waitForSelector('html[lang="zh-CN"], html[lang="zh"]');
  await settled(page);
  await page.locator('#gpu-check').click();
  await page.waitForFunction(() => document.getElementById('gpu-note').dataset.kind === 'info', null, { timeout: 60_000 });
  assert.equal(await note(page).innerText(), '这里没有 WebGPU，在 CPU 上运行');
  assert.match(await note(page).getAttribute('title'), /^(这个浏览器没有 WebGPU|WebGPU 在这个浏览器里找不到显卡适配器)，所以模型在 CPU（WebAssembly）上运行：算出的数字一样/);
  await page.evaluate(() => (location.hash = 'view=overview&lang=en'));
  await page.waitForSelector('html[lang="en"]');
  await settled(page);

  await page.selectOption('#backend', 'gpu');
  await page.waitForFunction(() => document.getElementById('gpu-note').dataset.kind === 'info' && /the model runs on the CPU/.test(document.getElementById('gpu-note').title), null, { timeout: 60_000 });
  await settled(page);
  assert.match(await status(page), /^CPU · /);
  assert.equal(await note(page).innerText(), 'No WebGPU here: runs on the CPU');
  assert.match(await note(page).getAttribute('title'), /^(This browser has no WebGPU|WebGPU finds no graphics adapter in this browser), so the model runs on the CPU \(WebAssembly\): the same numbers/);
  assert.ok(await page.locator('.view-root').count(), 'the view still draws');
  const data = await page.evaluate(() => window.attnscope.tensor('logits').then((d) => d.length));
  assert.ok(data > 0);
  await screenshot(page, 'gpu-fallback');
  assert.deepEqual(page.consoleErrors, []);
});

test('on WebGPU, a run that knocks out heads or asks for the logit lens or head attribution goes to the CPU', async (t) => {
  const server = await startServer();
  t.after(server.close);
  const browser = await launch();
  t.after(() => browser.close());
  const page = await openPage(browser, server.url);
  await settled(page);
  const names = ['logits', 'layers.0.attn.context', 'layers.1.logit_lens', 'layers.1.attn.head_logit'];
  const out = await page.evaluate(async (names) => {
    const { app, call } = window.attnscope;
    const asked = { ...app.args(), ablate: [[0, 1]], logitLens: true, headLogit: true };
    const onGpu = await call('run', { args: { ...asked, backend: 'gpu' } });
    const read = async (args) => new Map((await call('tensors', { args, names })).tensors.map((x) => [x.name, x.data]));
    const [gpu, cpu] = [await read({ ...asked, backend: 'gpu' }), await read({ ...asked, backend: 'cpu' })];
    const plain = (await call('tensors', { args: { ...app.args(), backend: 'cpu' }, names: ['logits'] })).tensors[0].data;
    const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
    return {
      backend: onGpu.backend,
      gpuError: onGpu.gpu_error,
      lengths: names.map((n) => gpu.get(n).length),
      diffs: names.map((n) => maxDiff(gpu.get(n), cpu.get(n))),
      moved: maxDiff(gpu.get('logits'), plain),
    };
  }, names);
  assert.equal(out.backend, 'cpu', 'the run went to the CPU');
  assert.equal(out.gpuError, null, 'falling back is not a GPU failure');
  assert.ok(out.lengths.every((n) => n > 0), `every tensor recorded: ${out.lengths}`);
  assert.deepEqual(out.diffs, names.map(() => 0), 'the CPU\'s numbers exactly');
  assert.ok(out.moved > 1e-4, `knocking out head 0:1 moves the logits (by ${out.moved})`);
  assert.deepEqual(page.consoleErrors, []);
});
