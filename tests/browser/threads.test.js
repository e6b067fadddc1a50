// The threaded engine build in headless Chromium: a cross-origin-isolated page (COOP/COEP, as the
// demo server sends) under the strict CSP runs it — workers started from the package's files,
// results bit-identical to the single-thread build — and the same page without isolation falls
// back to one thread without an error or a warning.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { DEMO_HEADERS, STRICT_CSP, serve } from '../../scripts/serve.mjs';
import { expectProblems, startBrowser } from './support.js';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>threads</title>
<link rel="icon" href="data:,"><script type="module" src="/__threads__/run.js"></script></head><body></body></html>`;
// Same-origin script (the CSP forbids inline ones): threaded vs single-thread on one input.
const RUN = `import { init, threadsSupported } from '/attnlens.js';
const violations = [];
document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
// A language model runs on the engine's threads too: its module's heap is then shared memory.
async function languageModel(lens, single) {
  const bytes = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  const same = (x, y) => x.length === y.length && bytes(x).every((v, i) => v === bytes(y)[i]);
  const [lm, lmSingle] = [await lens.loadModel('stories260K'), await single.loadModel('stories260K')];
  const text = 'Once upon a time, there was a little dog named Max. He liked to play.';
  const [r, rSingle] = [lm.run(text), lmSingle.run(text)];
  const [g, gSingle] = [lm.generate('Lily', { steps: 16, temperature: 0 }), lmSingle.generate('Lily', { steps: 16, temperature: 0 })];
  return { lmThreads: lm.info.threads, lmTokens: r.tokens, lmSingleTokens: rSingle.tokens, lmText: g.text, lmSingleText: gSingle.text,
    lmSame: same(r.logits, rSingle.logits) && r.layers.every((l, i) => same(l.attention, rSingle.layers[i].attention)) };
}
try {
  const lens = await init({ threads: 2 });
  const single = await init({ threads: false });
  const heads = 8, n = 256, dK = 64;
  let s = 7;
  const q = Float32Array.from({ length: heads * n * dK }, () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1);
  const a = lens.attention(q, q, q, { dK, heads }), b = single.attention(q, q, q, { dK, heads });
  const bytes = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  const same = (x, y) => x.length === y.length && bytes(x).every((v, i) => v === bytes(y)[i]);
  const model = await languageModel(lens, single);
  window.__result = { isolated: crossOriginIsolated, supported: threadsSupported(), threads: lens.threads,
    threaded: lens.threaded, build: lens.build, singleThreads: single.threads,
    same: same(a.weights, b.weights) && same(a.output, b.output), violations, ...model };
} catch (error) {
  window.__result = { error: String(error?.stack ?? error) };
}`;

describe('threads in Chromium', () => {
  let browser;
  before(async () => { browser = await startBrowser({ serveOptions: { headers: DEMO_HEADERS } }); });
  afterEach(() => browser?.assertNoProblems());
  after(() => browser?.close());

  /** Opens the page; `expected`: the problems it must report (expectProblems), no others. */
  async function open(isolated, csp = STRICT_CSP, expected = []) {
    const page = await browser.newPage();
    const headers = isolated ? { ...DEMO_HEADERS, 'Content-Security-Policy': csp } : { 'Content-Security-Policy': csp };
    await page.route(`${browser.url}/__threads__/**`, (route) => {
      const js = route.request().url().endsWith('.js');
      return route.fulfill({ status: 200, body: js ? RUN : PAGE,
        headers: { ...headers, 'Content-Type': js ? 'text/javascript' : 'text/html; charset=utf-8' } });
    });
    const workers = [];
    page.on('worker', (w) => workers.push(w.url()));
    const result = await expectProblems(page, expected, async () => {
      await page.goto(`${browser.url}/__threads__/page.html`);
      await page.waitForFunction(() => window.__result);
      return page.evaluate(() => window.__result);
    });
    return { result, workers, problems: page.problems };
  }

  it('an isolated page under the strict CSP runs the threaded build, with the same numbers', async () => {
    const { result, workers, problems } = await open(true);
    assert.equal(result.error, undefined);
    assert.equal(result.isolated, true);
    assert.equal(result.supported, true);
    assert.equal(result.threads, 2);
    assert.equal(result.threaded, true);
    assert.equal(result.build, 'relaxed', 'Chromium validates relaxed SIMD: its threaded build runs');
    assert.equal(result.singleThreads, 1);
    assert.equal(result.same, true, 'threaded results are bit-identical to the single-thread build');
    assert.equal(result.lmThreads, 2, 'the language model runs on the engine\'s two threads');
    assert.equal(result.lmSame, true, 'its logits and attention are bit-identical to one thread');
    assert.deepEqual(result.lmTokens, result.lmSingleTokens);
    assert.ok(result.lmTokens.length > 10 && result.lmTokens.join('').includes('dog'), result.lmTokens.join('|'));
    assert.equal(result.lmText, result.lmSingleText);
    assert.deepEqual(result.violations, []);
    assert.ok(workers.length >= 1 && workers.every((u) => /\/engine\/pthread-worker\.js$/.test(u)), `workers: ${workers}`);
    assert.deepEqual(problems, []);
    assert.deepEqual(browser.offHost, []);
  });

  it('a page without isolation falls back to one thread, quietly', async () => {
    const { result, workers, problems } = await open(false);
    assert.equal(result.error, undefined);
    assert.equal(result.isolated, false);
    assert.equal(result.supported, false);
    assert.equal(result.threads, 1);
    assert.equal(result.threaded, false);
    assert.equal(result.build, 'relaxed');
    assert.equal(result.same, true);
    assert.equal(result.lmThreads, 1, 'the language model too');
    assert.equal(result.lmSame, true);
    assert.deepEqual(workers, []);
    assert.deepEqual(problems, []);
  });

  it('an isolated page whose CSP refuses workers falls back to one thread with a warning', async () => {
    const { result } = await open(true, `${STRICT_CSP}; worker-src 'none'`, [
      /^console error: Creating a worker from '.*\/engine\/pthread-worker\.js' violates .*"worker-src 'none'"/,  // Chromium's CSP report
      /^console warning: attnlens: the threaded build did not start/,  // ours
    ]);
    assert.equal(result.error, undefined);
    assert.equal(result.isolated, true);
    assert.equal(result.threads, 1);
    assert.equal(result.threaded, false);
    assert.equal(result.same, true);
  });

  it('a Vite build finds the worker script and the threaded build (isolated page, strict CSP)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'attnlens-vite-threads-'));
    let server;
    try {
      const entry = fileURLToPath(new URL('../../web/attnlens.js', import.meta.url));
      await writeFile(path.join(dir, 'index.html'), PAGE.replace('/__threads__/run.js', './main.js'));
      // The engine only: the bundled model's files are the package's, not the Vite app's.
      await writeFile(path.join(dir, 'main.js'), RUN.replace("'/attnlens.js'", JSON.stringify(entry))
        .replace('await languageModel(lens, single)', '{}'));
      const { build } = await import('vite');
      await build({ root: dir, logLevel: 'error', build: { outDir: 'dist', reportCompressedSize: false } });
      server = await serve({ root: path.join(dir, 'dist'), port: 0, index: '/index.html', headers: DEMO_HEADERS });
      const page = await browser.newPage();
      const workers = [];
      page.on('worker', (w) => workers.push(new URL(w.url()).pathname));
      await page.goto(`${server.url}/index.html`);
      await page.waitForFunction(() => window.__result);
      const result = await page.evaluate(() => window.__result);
      assert.equal(result.error, undefined);
      assert.deepEqual([result.threads, result.threaded, result.build, result.same], [2, true, 'relaxed', true]);
      assert.ok(workers.length >= 1 && workers.every((u) => /^\/assets\/pthread-worker-[\w-]+\.js$/.test(u)), `workers: ${workers}`);
      assert.deepEqual(page.problems, []);
    } finally {
      await server?.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
