// The server and pages of the cross-engine suite (engines.test.js). One server for all engines:
// the package's web root as `attnlens serve` gives it (strict CSP, cross-origin isolation), plus
// the suite's own pages under /__engines__/. Every HTML page it sends, the demo included, starts
// with the page-side recorder (engines.js RECORDER), since classic WebDriver has no console log.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';

import { DEMO_HEADERS, serve } from '../../scripts/serve.mjs';
import { RECORDER } from './engines.js';
import { SENTENCE, nested, ref, vectors } from './elements/helpers.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const page = (title, body, modules) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<link rel="icon" href="data:,">${modules.map((m) => `<script type="module" src="${m}"></script>`).join('')}
</head><body><main>${body}</main></body></html>`;

// Threaded and single-thread builds on one input: bit-identical, and the threaded one really ran.
const THREADS = `import { init, threadsSupported } from '/attnlens.js';
try {
  const lens = await init({ threads: 2 }), single = await init({ threads: false });
  const heads = 4, n = 128, dK = 32;
  let s = 7;
  const q = Float32Array.from({ length: heads * n * dK }, () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1);
  const a = lens.attention(q, q, q, { dK, heads }), b = single.attention(q, q, q, { dK, heads });
  const bytes = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  const same = (x, y) => x.length === y.length && bytes(x).every((v, i) => v === bytes(y)[i]);
  window.__threads = { isolated: crossOriginIsolated, supported: threadsSupported(), threads: lens.threads,
    threaded: lens.threaded, build: lens.build, singleBuild: single.build, same: same(a.weights, b.weights) && same(a.output, b.output) };
} catch (error) {
  window.__threads = { error: String(error?.stack ?? error) };
}`;

/** The figures page: one of each element (data set by the test), plus an element in its error state. */
export const FIGURES_BODY = `<button type="button" id="start">Start</button>
<attn-bars id="bars" query="it"></attn-bars>
<attn-heatmap id="heatmap"></attn-heatmap>
<attn-pipeline id="pipeline" query="2"></attn-pipeline>
<attn-heads id="heads"></attn-heads>
<attn-lines id="lines"></attn-lines>
<attn-compare id="compare" head-a="0" head-b="2" view="all"></attn-compare>
<attn-generate id="generate" prompt="Lily had a red ball. She" steps="6" temperature="0"></attn-generate>
<attn-heatmap id="broken"></attn-heatmap>`;

// Their data: one head of hand-made-size random vectors, and four heads projected from X.
export const ONE = vectors(SENTENCE, { dK: 4, seed: 5 });
export const MULTI = { dModel: 8, heads: 4, x: ref.uniform(SENTENCE.length * 8, 31),
  wQ: ref.uniform(64, 32), wK: ref.uniform(64, 33), wV: ref.uniform(64, 34) };
const n = SENTENCE.length, multiJSON = { tokens: SENTENCE, heads: MULTI.heads, X: nested(MULTI.x, n, MULTI.dModel),
  W_Q: nested(MULTI.wQ, 8, 8), W_K: nested(MULTI.wK, 8, 8), W_V: nested(MULTI.wV, 8, 8) };
export const FIGURES_DATA = { bars: ONE.json, heatmap: ONE.json, pipeline: ONE.json, lines: ONE.json, heads: multiJSON, compare: multiJSON };

const ROUTES = {
  '/__engines__/recorder.js': ['text/javascript', RECORDER],
  '/__engines__/axe.js': ['text/javascript', AXE],
  '/__engines__/figures.html': ['text/html; charset=utf-8', page('figures', FIGURES_BODY, ['/elements/index.js'])],
  '/__engines__/single.html': ['text/html; charset=utf-8',
    page('single file', '<attn-heatmap id="single"></attn-heatmap>', ['/dist/attnlens-single.js'])],
  '/__engines__/threads.html': ['text/html; charset=utf-8', page('threads', '', ['/__engines__/threads.js'])],
  '/__engines__/threads.js': ['text/javascript', THREADS],
};

const withRecorder = (html) => html.replace(/<head>/i, '<head><script src="/__engines__/recorder.js"></script>');

/** Starts the suite's server; resolves to { url, close() }. */
export async function startServer() {
  const inner = await serve({ port: 0, headers: DEMO_HEADERS });
  const server = http.createServer(async (req, res) => {
    try {
      const own = ROUTES[new URL(req.url, 'http://x').pathname];
      if (own) {
        const body = own[0].startsWith('text/html') ? withRecorder(own[1]) : own[1];
        res.writeHead(200, { ...DEMO_HEADERS, 'Content-Type': own[0], 'Cache-Control': 'no-cache' }).end(body);
        return;
      }
      const response = await fetch(inner.url + req.url, { method: req.method, redirect: 'manual' });
      const headers = Object.fromEntries(response.headers);
      let body = Buffer.from(await response.arrayBuffer());
      if (headers['content-type']?.startsWith('text/html')) {
        body = Buffer.from(withRecorder(body.toString('utf8')));
        headers['content-length'] = String(body.length);
      }
      delete headers['content-encoding'];
      delete headers['transfer-encoding'];
      res.writeHead(response.status, headers).end(body);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); await inner.close(); },
  };
}
