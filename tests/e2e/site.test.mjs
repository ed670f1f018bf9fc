// The deployable site (dist/, tools/site.mjs): www/ with the page's modules bundled into one app.js.
// It must be the same page: the same prediction as www/ on the built-in model, Chinese fetched for a
// Chinese reader, an attention map and a lesson drawn, no console error; its first visit asks for
// one of the page's modules where www/ asks for a hundred; and its release manifest names exactly
// the files deployed, none of the modules folded into the bundle.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { launch, openPage, settled, startServer } from './helpers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIST = join(ROOT, 'dist');

let servers;
let browser;

before(async () => {
  assert.ok(existsSync(join(DIST, 'app.js')), 'dist/ is built by ./build.sh build (tools/site.mjs)');
  servers = { dist: await startServer({ root: 'dist' }), www: await startServer() };
  browser = await launch();
});

after(async () => {
  await browser?.close();
  for (const server of Object.values(servers ?? {})) await server.close();
});

// The built-in model's overview on a site, and the page's own scripts it asked for.
async function overview(site) {
  const page = await openPage(browser, new URL('index.html', servers[site].url).href);
  await page.waitForFunction(() => window.attnscope?.app.phase === 'ready' && window.attnscope.app.source?.kind === 'builtin', null, { timeout: 120_000 });
  await settled(page);
  await page.waitForSelector('.ov-prediction .ov-predict:not(.ov-waiting)');
  const prediction = await page.locator('.ov-prediction').innerText();
  const scripts = await page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .map((e) => new URL(e.name))
      .filter((u) => u.origin === location.origin && u.pathname.endsWith('.js') && !/^\/pkg/.test(u.pathname))
      .map((u) => u.pathname),
  );
  return { page, prediction, scripts };
}

test('dist/ is the same page as www/: the same prediction, one module for the page where www/ loads a hundred', async () => {
  const dist = await overview('dist');
  const www = await overview('www');
  assert.equal(dist.prediction, www.prediction);
  assert.ok(www.scripts.length >= 50, `www/ loads its modules one by one (${www.scripts.length})`);
  assert.ok(dist.scripts.length <= 6, `dist/ loads ${dist.scripts.join(', ')}`);
  assert.ok(dist.scripts.includes('/app.js'));
  await www.page.close();

  // Chinese comes when asked for, and the views and lessons draw.
  const { page } = dist;
  await page.locator('#lang-switch').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' || document.title.includes('总览'), null, { timeout: 30_000 });
  await settled(page);
  assert.match(await page.locator('.ov-head h2').innerText(), /[\u4e00-\u9fff]/);
  for (const view of ['attention', 'grid', 'lessons']) {
    await page.evaluate((v) => {
      location.hash = `view=${v}`;
    }, view);
    await page.waitForSelector(`.view-${view}`);
    await settled(page);
  }
  assert.ok((await page.locator('.view-lessons canvas, .view-lessons table').count()) > 0, 'a lesson is drawn');
  assert.deepEqual(page.consoleErrors, []);
  await page.close();
});

test('dist/’s release manifest names exactly the files deployed, and no module folded into the bundle is deployed', () => {
  const manifest = JSON.parse(readFileSync(join(DIST, 'release.json'), 'utf8'));
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(DIST, path).split('\\').join('/'));
    }
  };
  walk(DIST);
  const listed = Object.keys(manifest.files);
  const unlisted = files.filter((f) => !listed.includes(f) && !/\.(gguf|md)$|^sw\.js$|^release\.json$|(^|\/)\./.test(f));
  assert.deepEqual(unlisted, [], 'every deployed file is in the manifest');
  assert.deepEqual(listed.filter((f) => !files.includes(f)), [], 'every listed file is deployed');
  for (const folded of ['page', 'parts', 'views', 'panels', 'lessons']) assert.ok(!existsSync(join(DIST, folded)), `dist/${folded}/ is in app.js`);
  for (const own of ['first.js', 'boot.js', 'worker.js', 'element.js', 'sw.js', 'strings/zh.js']) assert.ok(existsSync(join(DIST, own)), `dist/${own} is loaded by its own URL`);
});
