// A tiny static file server for www/: `node tools/serve.mjs <root> <port>` (port 0 picks a free one).
// No dependencies. Sends the Content-Security-Policy the app must live under and the cross-origin
// isolation headers its threads build needs (ATTNSCOPE_ISOLATION=off leaves those out), so development
// and the end-to-end tests see what a strict deployment would. Prints one line with the URL once listening.
import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { releaseManifest } from './release_manifest.mjs';

const [rootArg = 'www', portArg = '8080'] = process.argv.slice(2);
const root = resolve(rootArg);

const CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  // blob: the threads build's pool starts its workers from a blob of their script (wasm-bindgen-rayon).
  "worker-src 'self' blob:",
  "img-src 'self' data: blob:",
  // https: lets a reader load a model from another site by its folder URL (that site must allow
  // it with CORS); the page itself fetches nothing from elsewhere.
  "connect-src 'self' https: blob: data:",
].join('; ');

// Cross-origin isolation, which gives the page SharedArrayBuffer and with it the core's threads build
// (www/worker.js); ATTNSCOPE_ISOLATION=off serves the page as a host without these headers would (GitHub
// Pages), where it runs the one-thread build. require-corp: the page loads nothing from other sites but
// by CORS fetch.
const ISOLATION =
  process.env.ATTNSCOPE_ISOLATION === 'off'
    ? {}
    : { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.wgsl': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.safetensors': 'application/octet-stream',
  '.bin': 'application/octet-stream',
};

// The decoded path of a request target, or null when it is malformed: not starting with one "/", an
// empty segment ("//", which URL parsers read as a host), bad percent-encoding, or a NUL byte.
function pathOf(target) {
  const raw = target.split(/[?#]/, 1)[0];
  if (!raw.startsWith('/') || raw.includes('//')) return null;
  let path;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return null;
  }
  return path.includes('\0') ? null : path;
}

// Resolves a decoded path to a file under root, or null: no escaping root, directories mean index.html.
async function fileFor(urlPath) {
  let path = resolve(join(root, urlPath));
  if (path !== root && !path.startsWith(root + sep)) return null;
  try {
    let info = await stat(path);
    if (info.isDirectory()) {
      path = join(path, 'index.html');
      info = await stat(path);
    }
    return info.isFile() ? { path, size: info.size } : null;
  } catch {
    return null;
  }
}

const server = createServer(async (req, res) => {
  const headers = {
    'Content-Security-Policy': CSP,
    'X-Content-Type-Options': 'nosniff',
    ...ISOLATION,
    // A development server: always the freshly built wasm, never a cached one.
    'Cache-Control': 'no-store',
  };
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...headers, Allow: 'GET, HEAD' }).end();
    return;
  }
  const path = pathOf(req.url);
  if (path === null) {
    console.error(`400 ${req.url}`);
    res.writeHead(400, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('bad request\n');
    return;
  }
  // The release manifest the service worker reads, made from the working tree as it is now, so that
  // an edited file reaches the page on its next load (build.sh writes www/release.json for a deploy).
  if (path === '/release.json') {
    const body = Buffer.from(`${JSON.stringify(await releaseManifest(root))}\n`);
    res.writeHead(200, { ...headers, 'Content-Type': MIME['.json'], 'Content-Length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  const file = await fileFor(path);
  if (!file) {
    console.error(`404 ${req.url}`);
    res.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  res.writeHead(200, {
    ...headers,
    'Content-Type': MIME[extname(file.path).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': file.size,
  });
  if (req.method === 'HEAD') res.end();
  else createReadStream(file.path).on('error', () => res.destroy()).pipe(res);
});

// Loopback only: this serves a working tree, not a site.
server.listen(Number(portArg), '127.0.0.1', () => {
  console.log(`serving ${rootArg} at http://localhost:${server.address().port}/`);
});
