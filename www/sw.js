// attnscope's service worker: a return visit loads the app from its own copies, downloads only what
// changed, and the site keeps working offline once it has been opened.
//
// What it keeps is named by the release manifest (release.json, written by build.sh, made live by
// tools/serve.mjs): every file of the app with its content's hash. A copy is kept under its path and
// that hash, so it answers for as long as the manifest names the same content; once a release changes
// a file, the next visit fetches that file again (revalidated, never a stale HTTP-cache copy), and the
// copies no release names any more are deleted. Each page load asks the network for the manifest first
// (a few KB); without a network the kept manifest answers, and with it the kept files. Everything the
// manifest does not name (a checkpoint from a folder URL, however large, a GGUF file, which the page
// keeps in IndexedDB itself) is left to the network.
//
// The first visit is loaded before this worker is in control: the page (offline.js) hands over the
// list of what it and its Web Worker loaded, and the string tables of the languages it did not show,
// and each is kept from the browser's HTTP cache where it is there (no second download), checked
// against the manifest's hash. A classic script, the kind of service worker every browser runs.

const CACHE = 'attnscope-app';
const MANIFEST = new URL('./release.json', self.registration.scope).href;

self.addEventListener('install', () => self.skipWaiting());

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

// The manifest this worker answers from: the last one read, from the network at each page load.
let manifest = null;

async function keptManifest() {
  if (manifest) return manifest;
  const kept = await (await caches.open(CACHE)).match(MANIFEST);
  manifest = kept ? await kept.json() : null;
  return manifest;
}

// The network's manifest, kept; null without a network or a manifest (the worker then answers from
// the kept one, or leaves everything to the network).
async function freshManifest() {
  try {
    const response = await fetch(MANIFEST, { cache: 'no-store' });
    if (!response.ok) return null;
    const text = await response.text();
    const read = JSON.parse(text);
    if (typeof read?.release !== 'string' || typeof read.files !== 'object') return null;
    const cache = await caches.open(CACHE);
    const changed = (await keptManifest())?.release !== read.release;
    manifest = read;
    if (changed) {
      await cache.put(MANIFEST, new Response(text, { headers: { 'Content-Type': 'application/json' } }));
      await prune(cache, read);
    }
    return read;
  } catch {
    return null;
  }
}

// Deletes the copies the manifest no longer names.
async function prune(cache, current) {
  for (const request of await cache.keys()) {
    if (request.url === MANIFEST) continue;
    const { path, hash } = keyParts(request.url);
    if (current.files[path] !== hash) await cache.delete(request);
  }
}

// A file's path under the scope ('' for the scope itself is index.html), or null outside it.
function pathOf(url) {
  const u = new URL(url);
  const scope = new URL(self.registration.scope);
  if (u.origin !== scope.origin || !u.pathname.startsWith(scope.pathname)) return null;
  const path = decodeURIComponent(u.pathname.slice(scope.pathname.length));
  return path === '' || path.endsWith('/') ? `${path}index.html` : path;
}

const keyOf = (path, hash) => new URL(`${path}?release-file=${hash}`, self.registration.scope).href;
function keyParts(key) {
  const u = new URL(key);
  return { path: pathOf(key), hash: u.searchParams.get('release-file') };
}

async function sha16(buffer) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', buffer));
  return [...digest.slice(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

// Keeps `response`'s body under the path and hash when it is the content the manifest names.
async function keep(path, hash, response) {
  const body = await response.arrayBuffer();
  if ((await sha16(body)) !== hash) return false;
  const headers = new Headers(response.headers);
  headers.delete('Content-Encoding');
  headers.set('Content-Length', String(body.byteLength));
  await (await caches.open(CACHE)).put(keyOf(path, hash), new Response(body, { status: 200, headers }));
  return true;
}

// The answer for a file the manifest names: the kept copy, else the network's (revalidated), kept.
async function answer(request, path, hash, event) {
  const cache = await caches.open(CACHE);
  const found = await cache.match(keyOf(path, hash));
  if (found) return found;
  const response = await fetch(request.mode === 'navigate' ? new URL(path, self.registration.scope).href : request, { cache: 'no-cache' });
  if (response.ok && (response.type === 'basic' || response.type === 'cors' || response.type === 'default')) {
    event.waitUntil(keep(path, hash, response.clone()).catch(() => false));
  }
  return response;
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || request.headers.has('range')) return;
  const path = pathOf(request.url);
  if (path === null || path === 'release.json' || path === 'sw.js') return;
  const navigate = request.mode === 'navigate';
  // A page load: the manifest from the network first (which also prunes); a file: the manifest in hand.
  const current = navigate ? null : manifest;
  if (!navigate && current && !(path in current.files)) return;
  if (!navigate && current && new URL(request.url).search) return;
  event.respondWith(
    (async () => {
      const m = navigate ? ((await freshManifest()) ?? (await keptManifest())) : (current ?? (await keptManifest()));
      const file = navigate ? 'index.html' : path;
      const hash = m?.files[file];
      if (!hash || (!navigate && new URL(request.url).search)) return fetch(request);
      try {
        return await answer(request, file, hash, event);
      } catch (err) {
        // Offline with no copy under this hash: an older copy of the same file is better than nothing.
        const older = (await (await caches.open(CACHE)).keys()).find((k) => keyParts(k.url).path === file);
        if (older) return caches.match(older);
        throw err;
      }
    })(),
  );
});

// {attnscope: 'cache', urls}: what the page loaded before this worker was in control. Each file the
// manifest names is kept from the HTTP cache (the network where it is not there), checked by its hash.
// Answered on the message port with how many were kept.
self.addEventListener('message', (event) => {
  const { attnscope, urls } = event.data ?? {};
  if (attnscope !== 'cache' || !Array.isArray(urls)) return;
  event.waitUntil(
    (async () => {
      const m = (await freshManifest()) ?? (await keptManifest());
      const cache = await caches.open(CACHE);
      const wanted = new Map();
      for (const url of urls) {
        if (typeof url !== 'string') continue;
        let path;
        try {
          path = pathOf(new URL(url, self.registration.scope).href.split('#')[0]);
        } catch {
          continue;
        }
        if (path !== null && m?.files[path]) wanted.set(path, m.files[path]);
      }
      if (m?.files['index.html']) wanted.set('index.html', m.files['index.html']);
      let kept = 0;
      await Promise.all(
        [...wanted].map(async ([path, hash]) => {
          if (await cache.match(keyOf(path, hash))) return kept++;
          const url = new URL(path, self.registration.scope).href;
          try {
            if (await keep(path, hash, await fetch(url, { cache: 'force-cache' }))) return kept++;
            if (await keep(path, hash, await fetch(url, { cache: 'no-cache' }))) return kept++;
          } catch {
            // Offline already: kept on a later visit.
          }
        }),
      );
      event.ports[0]?.postMessage({ cached: kept, of: wanted.size });
    })(),
  );
});
