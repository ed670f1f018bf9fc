// attnscope's service worker: the site keeps working offline once it has been opened. Requests go
// to the network first, so a reader online always gets the current files, and every same-origin
// answer is kept; without a network the kept copy answers. The page (offline.js) also hands over
// the list of everything it and its Web Worker loaded before this worker was in control, and the
// string tables of the languages it did not show (strings/zh.js on an English visit), so the first
// visit is enough: app shell, modules, both languages, wasm and tokenizer. No list of files is kept
// here. A classic script, the kind of service worker every browser runs.

const CACHE = 'attnscope-v1';

self.addEventListener('install', () => self.skipWaiting());

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

function sameOrigin(url) {
  return new URL(url, self.location.href).origin === self.location.origin;
}

// A GGUF file (SmolLM2's 98 MB) is kept by the page itself, in IndexedDB once it has run
// (model_source.js): not a second time here.
const keptByPage = (url) => /\.gguf$/i.test(new URL(url, self.location.href).pathname);

// {attnscope: 'cache', urls}: the page's list of what it loaded; answered on the message port.
self.addEventListener('message', (event) => {
  const { attnscope, urls } = event.data ?? {};
  if (attnscope !== 'cache' || !Array.isArray(urls)) return;
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const wanted = [...new Set(urls.filter((u) => typeof u === 'string' && sameOrigin(u) && !keptByPage(u)).map((u) => u.split('#')[0]))];
      const results = await Promise.allSettled(wanted.map((u) => cache.add(new Request(u, { cache: 'reload' }))));
      event.ports[0]?.postMessage({ cached: results.filter((r) => r.status === 'fulfilled').length, of: wanted.length });
    })(),
  );
});

// A kept copy of a request; a page that was never kept falls back to the app's own index.html.
async function kept(request) {
  const cache = await caches.open(CACHE);
  const found = await cache.match(request, { ignoreSearch: request.mode === 'navigate' });
  if (found || request.mode !== 'navigate') return found;
  return (await cache.match(new URL('./', self.registration.scope).href)) ?? cache.match(new URL('./index.html', self.registration.scope).href);
}

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || !sameOrigin(request.url) || keptByPage(request.url)) return;
  event.respondWith(
    (async () => {
      try {
        const response = await fetch(request);
        if (response.ok && response.type === 'basic') {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(request, copy)));
        }
        return response;
      } catch (err) {
        const copy = await kept(request);
        if (copy) return copy;
        throw err;
      }
    })(),
  );
});
