// The deployable site: www/ as a static host should serve it, in dist/. The page's hundred ES modules
// (app.js and everything it imports) become one minified app.js (esbuild), so that a first visit
// waits for one request where it waited for a chain of them; the modules only app.js needed are left
// out. Everything else is copied as it is: the scripts loaded by their own URL (first.js, boot.js,
// worker.js and what it imports, element.js, the service worker, the Chinese strings fetched for
// Chinese readers), the core's wasm builds, the models, the CSS. The source stays plain ES modules:
// ./build.sh serve and the tests serve www/ as it is, and tests/e2e/site.test.mjs runs dist/.
// Last, dist/release.json: the service worker's manifest of the files as deployed.
//
//   node tools/site.mjs [www] [dist]
import { build } from 'esbuild';
import { cpSync, mkdirSync, readdirSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { releaseManifest } from './release_manifest.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const [srcArg = 'www', outArg = 'dist'] = process.argv.slice(2);
const src = resolve(ROOT, srcArg);
const out = resolve(ROOT, outArg);

// Scripts a page or a worker loads by URL, not by app.js's imports: each keeps its own file, and so
// does every module it imports.
const OWN_URL = ['first.js', 'boot.js', 'worker.js', 'element.js', 'sw.js', 'strings/zh.js', 'safetensors_header.js'];

const bundle = (entry, write) =>
  build({
    entryPoints: [join(src, entry)],
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: write,
    // Names stay: error messages and the tests' hooks read some of them.
    keepNames: true,
    metafile: true,
    write,
    outfile: join(out, entry),
    legalComments: 'none',
    logLevel: 'warning',
    // The core's wasm-bindgen glue is imported by worker.js at run time, never by app.js.
    // boot.js is index.html's own script, which app.js waits for: the same module, not a copy.
    external: ['./pkg/*', './pkg-relaxed/*', './pkg-threads/*', './boot.js'],
  });

const inputs = (result) => new Set(Object.keys(result.metafile.inputs).map((path) => relative(src, resolve(ROOT, path))));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// What the other scripts import stays, whatever app.js also imports.
const kept = new Set();
for (const entry of OWN_URL) for (const path of inputs(await bundle(entry, false))) kept.add(path);
const app = await bundle('app.js', true);
const bundled = [...inputs(app)].filter((path) => path !== 'app.js' && !kept.has(path));
const left = new Set(bundled);
cpSync(src, out, {
  recursive: true,
  // app.js is the bundle; the modules only it imported are in it; release.json is written below.
  filter: (path) => {
    const rel = relative(src, path);
    return rel !== 'app.js' && rel !== 'release.json' && !left.has(rel);
  },
});
// Folders whose every module went into the bundle (page/, parts/, views/...) are not deployed empty.
const prune = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) prune(join(dir, entry.name));
  if (dir !== out && readdirSync(dir).length === 0) rmdirSync(dir);
};
prune(out);
const manifest = await releaseManifest(out);
writeFileSync(join(out, 'release.json'), `${JSON.stringify(manifest)}\n`);
const size = statSync(join(out, 'app.js')).size;
console.log(`${relative(ROOT, out)}/: app.js bundles ${bundled.length + 1} modules into ${(size / 1024).toFixed(0)} KiB; ${Object.keys(manifest.files).length} files in release ${manifest.release}`);
