// Writes www/models/builtin/ahead.json: the built-in model's first numbers, computed ahead
// (www/page/ahead.js). For each language, the page opens on the built-in model and its opening
// sentence in Debian's Chromium, the core runs it, and the overview's own overviewNumbers() (its
// tokens, top candidates, clearest head) is written with the model file's SHA-256. Run it again
// whenever the built-in model, its tokenizer, its samples or what the overview shows change;
// tests/e2e/ahead.test.mjs fails until then.
//
//   ./build.sh build && node tools/ahead.mjs
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, openPage, settled, startServer } from '../tests/e2e/helpers.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUILTIN = resolve(ROOT, 'www/models/builtin');
const LANGS = ['en', 'zh'];

/** The overview's numbers for the page's state, once its run has drawn them (`page`: a Playwright page). */
export async function liveNumbers(page) {
  await page.waitForSelector('.ov-predict[data-numbers="run"]', { timeout: 120_000 });
  await settled(page);
  return page.evaluate(async () => (await import('./views/overview.js')).overviewNumbers(window.attnscope.app));
}

/** The SHA-256 of the built-in model's weights, as ahead.json names the model. */
export async function modelHash() {
  return createHash('sha256').update(await readFile(resolve(BUILTIN, 'model.safetensors'))).digest('hex');
}

async function main() {
  const server = await startServer();
  const browser = await launch({ webgpu: false });
  try {
    const numbers = {};
    for (const lang of LANGS) {
      const page = await openPage(browser, new URL(`#lang=${lang}`, server.url).href);
      numbers[lang] = await liveNumbers(page);
      // The file being written may not be there yet: its 404 is expected.
      const errors = page.consoleErrors.filter((e) => !/status of 404/.test(e));
      if (errors.length) throw new Error(`${lang}: ${errors.join('\n')}`);
      await page.close();
      console.log(`${lang}: "${numbers[lang].text}" → ${numbers[lang].top.map((c) => `${c.piece} ${(100 * c.p).toFixed(1)} %`).join(', ')}`);
    }
    const file = { about: 'The built-in model’s overview numbers for each language’s opening sentence, computed ahead by tools/ahead.mjs (www/page/ahead.js).', model: { sha256: await modelHash() }, numbers };
    const path = resolve(BUILTIN, 'ahead.json');
    await writeFile(`${path}.tmp`, `${JSON.stringify(file, null, 1)}\n`);
    await rename(`${path}.tmp`, path);
    console.log(`wrote ${path}`);
  } finally {
    await browser.close();
    await server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
