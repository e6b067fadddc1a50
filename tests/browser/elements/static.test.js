// A plain HTML file with one <script type="module"> and the figures, next to a copy of the
// package's files, served as static files (no build step, strict CSP) works.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { startBrowser } from '../support.js';
import { assertClean, assertClose, readHeatmap, vectors } from './helpers.js';

const WEB = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../web');
const data = vectors(['static', 'pages', 'just', 'work'], { dK: 3, seed: 17, spread: 2 });

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>attnlens in a plain page</title>
<link rel="icon" href="data:,">
<script type="module" src="attnlens/elements/index.js"></script>
</head>
<body>
<attn-bars id="bars" query="just"><script type="application/json">${JSON.stringify(data.json)}</script></attn-bars>
<attn-heatmap id="heatmap" src="#data"></attn-heatmap>
<attn-pipeline id="pipeline" src="#data"></attn-pipeline>
<attn-heads id="heads" src="#data"></attn-heads>
<script type="application/json" id="data">${JSON.stringify(data.json)}</script>
</body>
</html>
`;

describe('a static page with no build step', () => {
  let browser, folder;
  before(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'attnlens-static-'));
    // Every engine build the loader may choose: relaxed SIMD where the browser validates it.
    for (const part of ['attnlens.js', 'engine', 'dist/attnlens-relaxed.mjs', 'dist/attnlens-relaxed.wasm',
      'dist/attnlens-simd.mjs', 'dist/attnlens-simd.wasm', 'dist/attnlens-scalar.mjs', 'dist/attnlens-scalar.wasm', 'elements'])
      await cp(path.join(WEB, part), path.join(folder, 'attnlens', part), { recursive: true });
    await writeFile(path.join(folder, 'index.html'), PAGE);
    browser = await startBrowser({ serveOptions: { root: folder, index: '/index.html' } });
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => {
    await browser?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('renders every figure from the copied files, with the engine\'s weights', async () => {
    const page = await browser.newPage();
    await page.goto(`${browser.url}/`);
    const states = await page.evaluate(async () => {
      await Promise.all(['attn-bars', 'attn-heatmap', 'attn-pipeline', 'attn-heads'].map((t) => customElements.whenDefined(t)));
      return Promise.all([...document.querySelectorAll('[id]:is(attn-bars, attn-heatmap, attn-pipeline, attn-heads)')]
        .map(async (el) => [el.id, await el.updateComplete, el.error]));
    });
    assert.deepEqual(states, [['bars', true, null], ['heatmap', true, null], ['pipeline', true, null], ['heads', true, null]]);
    const { ref } = await import('./helpers.js');
    const want = Array.from(ref.attention(data.q, data.k, data.v, { dK: 3 }).weights);
    const drawn = await readHeatmap(page, 'heatmap');
    assertClose(drawn.values, want, 1.5 / 255 / 0.7, 'drawn heatmap');
    const bars = await page.evaluate(() => [...document.getElementById('bars').row]);
    assertClose(bars, want.slice(8, 12), 1e-5, 'bars of "just"');
    assert.equal(await page.evaluate(() => document.getElementById('bars').lens.simd), true);
    assertClean(page, browser);
  });
});
