// The release manifest: every file of the app under www/ with the first 16 hex digits of its
// content's SHA-256, and a release id made of them all. The service worker (www/sw.js) answers a file
// from its copy while the manifest names the same content, and fetches it again once it does not, so
// a return visit downloads only what changed and a new release is picked up on the next visit.
// Left out: what the page keeps itself (a GGUF file goes to IndexedDB), notes (*.md), dot files (build
// stamps), the service worker (the browser checks it itself) and the manifest.
//
//   node tools/release_manifest.mjs www > www/release.json     (build.sh; tools/serve.mjs makes it live)
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const LEFT_OUT = [/\.gguf$/i, /\.md$/i, /(^|\/)\./, /^sw\.js$/, /^release\.json$/];

async function* files(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

// A file's hash is computed again only when its size or modification time changed (tools/serve.mjs
// asks at every page load).
const known = new Map();
async function hashOf(path) {
  const info = await stat(path);
  const seen = known.get(path);
  if (seen && seen.size === info.size && seen.mtime === info.mtimeMs) return seen.hash;
  const hash = createHash('sha256').update(await readFile(path)).digest('hex').slice(0, 16);
  known.set(path, { size: info.size, mtime: info.mtimeMs, hash });
  return hash;
}

/** The manifest of the app in `root`: { release, files: { 'path/from/root': hash } }, paths sorted. */
export async function releaseManifest(root) {
  const found = [];
  for await (const path of files(root)) {
    const name = relative(root, path).split(sep).join('/');
    if (LEFT_OUT.some((re) => re.test(name))) continue;
    found.push([name, await hashOf(path)]);
  }
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const release = createHash('sha256').update(found.map(([n, h]) => `${n} ${h}\n`).join('')).digest('hex').slice(0, 16);
  return { release, files: Object.fromEntries(found) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? 'www';
  process.stdout.write(`${JSON.stringify(await releaseManifest(root))}\n`);
}
