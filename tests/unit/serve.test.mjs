// tools/serve.mjs, the development server the e2e tests run under: a malformed request path gets 400
// and the server keeps serving. Starts its own server (never the shared one from ATTNSCOPE_URL) and
// speaks raw HTTP over a socket, because fetch and node:http normalise a path like `//` before sending.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function start() {
  const child = spawn(process.execPath, ['tools/serve.mjs', 'www', '0'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const port = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`tools/serve.mjs exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = line.match(/:(\d+)\//);
      if (match) resolve(Number(match[1]));
    });
  });
  return { child, port };
}

// Sends `GET <target>` exactly as written and resolves to the status code of the answer.
function statusOf(port, target) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    });
    let reply = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (reply += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const match = reply.match(/^HTTP\/1\.1 (\d{3})/);
      if (match) resolve(Number(match[1]));
      else reject(new Error(`no status line in ${JSON.stringify(reply.slice(0, 80))}`));
    });
  });
}

test('a malformed path gets 400 and the server keeps serving', async () => {
  const { child, port } = await start();
  try {
    assert.equal(await statusOf(port, '/index.html'), 200);
    for (const bad of ['//', '///', '//evil.example/x', '/%', '/%E0%A4%A', '/a%00b', 'index.html']) {
      assert.equal(await statusOf(port, bad), 400, `GET ${bad}`);
      assert.equal(child.exitCode, null, `the server still runs after GET ${bad}`);
      assert.equal(await statusOf(port, '/index.html'), 200, `serving after GET ${bad}`);
    }
    assert.equal(await statusOf(port, '/../Cargo.toml'), 404);
    assert.equal(await statusOf(port, '/no-such-file.js'), 404);
  } finally {
    child.kill();
  }
});
