// A static host that serves a folder as GitHub Pages does (ETag and `Cache-Control: max-age=600` on
// every file, 304 to a matching If-None-Match, gzip for text, no cross-origin isolation headers), with
// the reader's link simulated on the server: every answer waits `latencyMs` before its first byte, and
// all answers together share `mbps` of bandwidth. It counts the bytes it sends, so a benchmark can
// say what a visit cost the host. Used by tools/bench/first_look.mjs and tools/bench/figures.mjs.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.safetensors': 'application/octet-stream',
  '.gguf': 'application/octet-stream',
  '.webmanifest': 'application/manifest+json',
};
// GitHub Pages compresses text types and wasm; binary weights go as they are.
// Files up to this size are read when the host starts.
const WARM_LIMIT = 32 << 20;
const COMPRESSED = new Set(['.html', '.js', '.mjs', '.css', '.json', '.wasm', '.svg', '.md', '.webmanifest']);

/** Starts the host on a free port. Resolves to { url, sent(), reset(), requests(), close() }. */
export async function startPagesHost(root, { mbps = Infinity, latencyMs = 0 } = {}) {
  const base = resolve(root);
  const bytesPerMs = (mbps * 1e6) / 8 / 1000;
  let sent = 0;
  let requests = [];
  let t0 = performance.now(); // reset(): the requests' start and end are in ms from it
  // The link: one queue of chunks, drained at the link's rate, shared by every answer in flight.
  let linkFreeAt = 0;
  const paced = async (res, body) => {
    const CHUNK = 16 * 1024;
    for (let at = 0; at < body.length; at += CHUNK) {
      const chunk = body.subarray(at, at + CHUNK);
      if (Number.isFinite(bytesPerMs)) {
        const now = performance.now();
        linkFreeAt = Math.max(linkFreeAt, now) + chunk.length / bytesPerMs;
        const wait = linkFreeAt - now;
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      }
      if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      sent += chunk.length;
    }
    res.end();
  };
  const cache = new Map(); // path -> { mtime, body, gz, etag }
  const load = async (path) => {
    const info = await stat(path);
    const hit = cache.get(path);
    if (hit && hit.mtime === info.mtimeMs) return hit;
    const body = await readFile(path);
    const entry = {
      mtime: info.mtimeMs,
      body,
      gz: COMPRESSED.has(extname(path)) ? gzipSync(body, { level: 6 }) : null,
      etag: `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`,
    };
    cache.set(path, entry);
    return entry;
  };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://host');
    const start = performance.now() - t0;
    let path = join(base, decodeURIComponent(url.pathname));
    if (path !== base && !path.startsWith(base + sep)) return res.writeHead(403).end();
    try {
      const info = await stat(path);
      if (info.isDirectory()) path = join(path, 'index.html');
      // A HEAD of a large file not read yet (SmolLM2's 98 MB, which the page asks about): its size,
      // without reading and hashing it here, which would hold up every other answer meanwhile.
      if (req.method === 'HEAD' && !cache.has(path) && info.size > WARM_LIMIT) {
        await new Promise((r) => setTimeout(r, latencyMs));
        requests.push({ path: `HEAD ${url.pathname}`, status: 200, bytes: 0, start, end: performance.now() - t0 });
        return res.writeHead(200, { 'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream', 'Content-Length': info.size, 'Cache-Control': 'max-age=600' }).end();
      }
      const file = await load(path);
      await new Promise((r) => setTimeout(r, latencyMs));
      const headers = { 'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream', 'Cache-Control': 'max-age=600', ETag: file.etag, Vary: 'Accept-Encoding' };
      if (req.headers['if-none-match'] === file.etag) {
        requests.push({ path: url.pathname, status: 304, bytes: 0, start, end: performance.now() - t0 });
        return res.writeHead(304, headers).end();
      }
      const gzip = file.gz && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
      const body = gzip ? file.gz : file.body;
      if (gzip) headers['Content-Encoding'] = 'gzip';
      headers['Content-Length'] = body.length;
      const entry = { path: req.method === 'HEAD' ? `HEAD ${url.pathname}` : url.pathname, status: 200, bytes: req.method === 'HEAD' ? 0 : body.length, start, end: null };
      requests.push(entry);
      res.writeHead(200, headers);
      if (req.method === 'HEAD') {
        entry.end = performance.now() - t0;
        return res.end();
      }
      await paced(res, body);
      entry.end = performance.now() - t0;
    } catch {
      await new Promise((r) => setTimeout(r, latencyMs));
      requests.push({ path: url.pathname, status: 404, bytes: 0, start, end: performance.now() - t0 });
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  // Every file but the largest read, compressed and hashed before the first request, as a real host
  // has them: otherwise the first visit would wait on this process's gzip of the wasm.
  const warm = async (dir) => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await warm(path);
      else if (entry.isFile() && (await stat(path)).size <= WARM_LIMIT) await load(path);
    }
  };
  await warm(base);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    sent: () => sent,
    requests: () => requests,
    reset() {
      sent = 0;
      requests = [];
      t0 = performance.now();
    },
    close: () => new Promise((r) => server.close(r)),
  };
}
