// A blog post as docs/authoring.md's static-site section says: the single file in the site's static
// folder, the data beside it, one tag with a fallback image made by `attnlens render`, previewed
// with `attnlens serve` (a child process; cross-origin isolation headers). With JavaScript the
// figure draws the engine's weights; without it the reader sees the CLI's image.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { assertClose, ref, vectors } from './elements/helpers.js';
import { startBrowser } from './support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'web/cli/attnlens.js');
const data = vectors(['The', 'cat', 'sat', 'because', 'it', 'was', 'tired'], { dK: 4, seed: 61, spread: 2 });

const POST = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>A post</title><link rel="icon" href="data:,">
<script type="module" src="/attnlens/attnlens-single.js"></script></head>
<body>
<p>Where does “it” look?</p>
<attn-heatmap id="fig" src="/data/cat.json" query="it" mask="causal">
  <img id="fallback" src="/img/cat-heatmap.svg" alt="Attention weights of the sentence">
</attn-heatmap>
</body>
</html>
`;

describe('a static site post: one tag, a CLI-made fallback, attnlens serve', () => {
  let site, server, url, browser;
  before(async () => {
    site = await mkdtemp(path.join(tmpdir(), 'attnlens-blog-'));
    for (const dir of ['attnlens', 'data', 'img']) await mkdir(path.join(site, dir));
    await copyFile(path.join(ROOT, 'web/dist/attnlens-single.js'), path.join(site, 'attnlens/attnlens-single.js'));
    await writeFile(path.join(site, 'data/cat.json'), JSON.stringify(data.json));
    await writeFile(path.join(site, 'index.html'), POST);
    await promisify(execFile)(process.execPath, [CLI, 'render', path.join(site, 'data/cat.json'), '--figure', 'heatmap',
      '--query', 'it', '--mask', 'causal', '-o', path.join(site, 'img/cat-heatmap.svg')]);
    server = spawn(process.execPath, [CLI, 'serve', site, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise((resolve, reject) => {
      server.stdout.on('data', (chunk) => { const m = String(chunk).match(/at (http:\/\/127\.0\.0\.1:\d+)\//); if (m) resolve(m[1]); });
      server.once('exit', (code) => reject(new Error(`attnlens serve exited (${code})`)));
    });
    browser = await startBrowser();
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    server?.kill();
    if (site) await rm(site, { recursive: true, force: true });
  });

  it('serves with cross-origin isolation; with JavaScript the figure draws the weights', async () => {
    const response = await fetch(`${url}/index.html`);
    assert.equal(response.headers.get('cross-origin-opener-policy'), 'same-origin');
    assert.equal(response.headers.get('cross-origin-embedder-policy'), 'require-corp');
    const page = await browser.newPage();
    await page.goto(`${url}/index.html`);
    const got = await page.evaluate(async () => {
      const el = document.getElementById('fig');
      await customElements.whenDefined('attn-heatmap');
      const ok = await el.updateComplete;
      return {
        ok, error: el.error, query: el.query, weights: Array.from(el.weights), isolated: crossOriginIsolated,
        fallbackShown: document.getElementById('fallback').getClientRects().length > 0, svg: el.toSVG(), build: el.lens.build,
        fallback: await (await fetch('/img/cat-heatmap.svg')).text(),
      };
    });
    // The CLI (no V8 flag: SIMD128) and the single file (SIMD128) compute the same bits, so the
    // fallback is the very picture the figure exports.
    assert.equal(got.build, 'simd');
    assert.equal(got.fallback, got.svg, 'the fallback image = the figure\'s toSVG()');
    assert.equal(got.ok, true, got.error);
    assert.equal(got.query, 4);
    assert.equal(got.isolated, true);
    assert.equal(got.fallbackShown, false, 'the figure replaced its fallback');
    assertClose(got.weights, Array.from(ref.attention(data.q, data.k, data.v, { dK: 4, causal: true }).weights), 1e-6, 'weights');
    assert.deepEqual(page.problems, []);
    assert.deepEqual(browser.offHost, []);
    await page.close();
  });

  it('without JavaScript the reader sees the command line\'s SVG', async () => {
    const noScript = await startBrowser({ contextOptions: { javaScriptEnabled: false } });
    try {
      const page = await noScript.newPage();
      await page.goto(`${url}/index.html`);
      // The test's own evaluate still runs; the page's scripts (the module) do not.
      const img = await page.evaluate(async () => {
        const el = document.getElementById('fallback');
        await el.decode();
        return { width: el.naturalWidth, height: el.naturalHeight, shown: el.getClientRects().length > 0, upgraded: Boolean(document.getElementById('fig').shadowRoot) };
      });
      assert.deepEqual([img.shown, img.upgraded], [true, false], JSON.stringify(img));
      assert.ok(img.width > 100 && img.height > 100, JSON.stringify(img));
      assert.deepEqual(noScript.offHost, []);
    } finally {
      await noScript.close();
    }
  });
});
