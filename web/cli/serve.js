// A small static server: 127.0.0.1 only, correct MIME types for .js/.mjs/.wasm, a strict
// Content-Security-Policy by default, no directory listings, no access outside its root. Used by
// `npm start` and the browser tests (through scripts/serve.mjs) and by `attnlens serve folder/`
// (serveFolder: an author's folder, offline, with cross-origin isolation headers, COOP/COEP, for
// threaded wasm, and no CSP of its own: the pages bring theirs).
import { createReadStream, promises as fs } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon',
  '.bin': 'application/octet-stream', '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8', '.md': 'text/plain; charset=utf-8',
};

// What a strict article page would set: no inline script, no eval; wasm compilation allowed.
export const STRICT_CSP = [
  "default-src 'self'", "script-src 'self' 'wasm-unsafe-eval'", "style-src 'self'",
  "img-src 'self' data: blob:", "connect-src 'self'", "object-src 'none'", "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts serving `root`; resolves to { server, url, close() }. `/` redirects to `index`.
 * `headers` are added to every response (the CSP by default).
 */
export function serve({ root = WEB_ROOT, port = 8080, host = '127.0.0.1', index = '/demo/',
                        headers = { 'Content-Security-Policy': STRICT_CSP } } = {}) {
  const rootDir = path.resolve(root);
  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://localhost');
      if (url.pathname === '/') {
        res.writeHead(302, { Location: index }).end();
        return;
      }
      let file = path.resolve(rootDir, '.' + decodeURIComponent(url.pathname));
      if (file !== rootDir && !file.startsWith(rootDir + path.sep)) {
        res.writeHead(403).end('forbidden');
        return;
      }
      let stat = await fs.stat(file).catch(() => null);
      if (stat?.isDirectory()) {
        file = path.join(file, 'index.html');
        stat = await fs.stat(file).catch(() => null);
      }
      if (!stat?.isFile()) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      res.writeHead(200, {
        'Content-Type': MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': stat.size, 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff',
        ...headers,
      });
      if (req.method === 'HEAD') res.end();
      else createReadStream(file).pipe(res);
    } catch {
      res.writeHead(400).end('bad request');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual } = server.address();
      resolve({
        server, url: `http://${host}:${actual}`,
        close: () => new Promise((done) => { server.closeAllConnections(); server.close(done); }),
      });
    });
  });
}

export const ISOLATION_HEADERS = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

/** Serves `folder` on 127.0.0.1:`port` (0: any free port); resolves to { url, root, close() }. */
export async function serveFolder(folder, { port = 8080 } = {}) {
  const root = path.resolve(folder);
  if (!(await fs.stat(root).catch(() => null))?.isDirectory()) throw new Error(`${folder}: no such folder`);
  const server = await serve({ root, port, index: '/index.html', headers: ISOLATION_HEADERS });
  return { url: server.url, root, close: server.close };
}
