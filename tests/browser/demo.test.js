import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import * as ref from '../js/reference.js';
import { startBrowser } from './support.js';

describe('demo page in headless Chromium', () => {
  let browser;
  before(async () => { browser = await startBrowser(); });
  after(async () => { await browser?.close(); });

  it('runs the SIMD module and draws the weights it computed', async () => {
    const page = await browser.newPage();
    await page.goto(`${browser.url}/demo/`);
    await page.waitForFunction(() => document.getElementById('heatmap').attnlens);
    const drawn = await page.evaluate(() => {
      const canvas = document.getElementById('heatmap');
      const { tokens, q, k, v, dK, weights, layout, simd, arch } = canvas.attnlens;
      const ctx = canvas.getContext('2d');
      const n = tokens.length;
      // Read back the red channel at each cell's centre: the page maps w to 255·(1 − w).
      const image = ctx.getImageData(0, 0, canvas.width, canvas.height);
      const red = [];
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) {
          const x = layout.label + j * layout.cell + layout.cell / 2;
          const y = layout.label + i * layout.cell + layout.cell / 2;
          red.push(image.data[(Math.floor(y) * canvas.width + Math.floor(x)) * 4]);
        }
      return { tokens, q: [...q], k: [...k], v: [...v], dK, weights: [...weights], red, simd, arch };
    });
    assert.equal(drawn.simd, true);
    assert.equal(drawn.arch, 'wasm');
    assert.deepEqual(drawn.tokens, ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.']);
    const n = drawn.tokens.length;
    // The engine's weights agree with an independent float64 reference…
    const want = ref.attention(Float32Array.from(drawn.q), Float32Array.from(drawn.k), Float32Array.from(drawn.v), { dK: drawn.dK });
    assert.ok(ref.maxAbsDiff(drawn.weights, want.weights) <= 1e-5);
    // …and the picture shows those weights (one 8-bit colour step of tolerance).
    for (let c = 0; c < n * n; c++)
      assert.ok(Math.abs(drawn.red[c] - 255 * (1 - want.weights[c])) <= 1.01, `cell ${c}`);
    assert.deepEqual(page.problems, []);
    assert.deepEqual(browser.offHost, []);
  });

  it('redraws when the sentence changes', async () => {
    const page = await browser.newPage();
    await page.goto(`${browser.url}/demo/`);
    await page.waitForFunction(() => document.getElementById('heatmap').attnlens);
    await page.fill('#sentence', 'attention is all you need');
    await page.waitForFunction(() => document.getElementById('heatmap').attnlens.tokens.length === 5);
    const weights = await page.evaluate(() => [...document.getElementById('heatmap').attnlens.weights]);
    assert.equal(weights.length, 25);
    for (let i = 0; i < 5; i++)
      assert.ok(Math.abs(weights.slice(i * 5, i * 5 + 5).reduce((a, b) => a + b) - 1) < 1e-5);
    assert.deepEqual(page.problems, []);
  });
});
