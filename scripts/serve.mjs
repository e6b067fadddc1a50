// A small static server for the demo page and the browser tests: 127.0.0.1 only, correct MIME
// types for .js/.mjs/.wasm, a strict Content-Security-Policy, no directory listings, no access
// outside its root. Usage: node scripts/serve.mjs [--port N] (PORT env also works).
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

export const WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../web');

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

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flag = process.argv.indexOf('--port');
  const port = Number(flag > 0 ? process.argv[flag + 1] : process.env.PORT ?? 8080);
  try {
    const { url } = await serve({ port });
    console.log(`attnlens demo: ${url}/demo/  (offline; Ctrl+C to stop)`);
  } catch (error) {
    if (error.code !== 'EADDRINUSE') throw error;
    console.error(`port ${port} is in use: start with another one, e.g. PORT=${port + 1} npm start`);
    process.exitCode = 1;
  }
}
