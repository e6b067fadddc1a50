// color-scale: the drawn colours (canvas pixels, SVG fills) against an independent float64
// mapping of the float64 reference weights, for every scale, on the figures that colour weights.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClose, readHeatmap, ref, setData, vectors } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;  // an 8-bit step on the ramp's widest channel, with margin

// The scales written out again in float64, row by row (not the element's code).
function reference(kind, weights, n, cols = n) {
  const out = new Float64Array(weights.length);
  let all = 0;
  for (const w of weights) all = Math.max(all, w);
  for (let i = 0; i < n; i++) {
    const row = Array.from(weights.slice(i * cols, (i + 1) * cols));
    const rowMax = Math.max(...row);
    row.forEach((w, j) => {
      const t = kind === 'sqrt' ? Math.sqrt(w)
        : kind === 'log' ? Math.max(0, (Math.log(w) - Math.log(1e-3)) / (Math.log(1) - Math.log(1e-3)))
        : kind === 'row' ? w / rowMax : kind === 'max' ? w / all : w;
      out[i * cols + j] = Math.min(1, Math.max(0, t));
    });
  }
  return out;
}

// An SVG's cell fills (rect[data-weight]) as positions on the low → high line of the theme.
function svgPositions(page, svg) {
  return page.evaluate((svg) => {
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const stops = [...doc.querySelectorAll('linearGradient stop')].map((s) => s.getAttribute('stop-color'));
    const rgb = (c) => (c.startsWith('#') ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : c.match(/\d+/g).map(Number));
    const low = rgb(stops[0]), high = rgb(stops[1]);
    const d = high.map((hc, c) => hc - low[c]);
    return [...doc.querySelectorAll('rect[data-weight]')].map((r) => {
      const px = rgb(r.getAttribute('fill'));
      return { weight: Number(r.getAttribute('data-weight')),
        t: d.reduce((a, dc, c) => a + dc * (px[c] - low[c]), 0) / d.reduce((a, dc) => a + dc * dc, 0) };
    });
  }, svg);
}

describe('color-scale', () => {
  let browser, page;
  // Diffuse weights (small spread): the case the scales are for.
  const data = vectors(SENTENCE, { dK: 8, seed: 5, spread: 0.6 });
  const n = SENTENCE.length;
  const want = ref.attention(data.q, data.k, data.v, { dK: 8 }).weights;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap><attn-heatmap id="bad"></attn-heatmap>');
    assert.equal(await setData(page, 'map', data.json), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  for (const kind of ['linear', 'sqrt', 'log', 'row', 'max']) {
    it(`heatmap, ${kind}: canvas pixels and SVG fills are the mapping of the weights; the readout keeps the weight`, async () => {
      const attribute = await page.evaluate(async (kind) => {
        const el = document.getElementById('map');
        el.setAttribute('color-scale', kind);
        await el.updateComplete;
        return { property: el.colorScale, state: el.state['color-scale'] };
      }, kind);
      assert.deepEqual(attribute, { property: kind, state: kind });
      const mapped = Array.from(reference(kind, want, n));
      const { values } = await readHeatmap(page, 'map');
      assertClose(values, mapped, TOLERANCE, `${kind}: drawn positions vs float64 mapping`);
      const svg = await page.evaluate(() => document.getElementById('map').toSVG());
      const cells = await svgPositions(page, svg);
      assert.equal(cells.length, n * n);
      assertClose(cells.map((c) => c.weight), Array.from(want), 0.005, `${kind}: SVG data-weight is the true weight (written to 2 decimals)`);
      assertClose(cells.map((c) => c.t), mapped, TOLERANCE, `${kind}: SVG fills vs float64 mapping`);
      // The legend says the scale: ticks for every scale but linear (0 … 1).
      const legend = await page.evaluate(() => [...document.getElementById('map').shadowRoot.querySelectorAll('.legend .tick')].map((t) => t.textContent));
      if (kind === 'linear') assert.deepEqual(legend, []);
      else assert.ok(legend.length >= 2, `${kind} legend ticks: ${legend}`);
      if (kind === 'log') assert.ok(legend[0].includes('0.001'), legend.join(' '));
      if (kind === 'row') assert.equal(legend.at(-1), 'row max');
      if (kind === 'max') assert.equal(Number(legend.at(-1)), Number(Math.max(...want).toPrecision(2)));
    });
  }

  it('applies to head="mean" (the aggregate is mapped, not each head)', async () => {
    const two = { tokens: SENTENCE, attention: [Array.from({ length: n }, (_, i) => Array.from(want.slice(i * n, (i + 1) * n))),
      Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)))] };
    const mean = want.map((w, c) => (w + (Math.floor(c / n) === c % n ? 1 : 0)) / 2);
    await page.evaluate(() => { const el = document.getElementById('map'); el.head = 'mean'; el.colorScale = 'sqrt'; });
    assert.equal(await setData(page, 'map', two), true);
    const { values } = await readHeatmap(page, 'map');
    assertClose(values, Array.from(reference('sqrt', mean, n)), TOLERANCE, 'mean, sqrt');
    await page.evaluate(() => { document.getElementById('map').head = 0; });
    assert.equal(await setData(page, 'map', data.json), true);
  });

  it('a bad color-scale is an attribute error (the figure keeps drawing); a bad property throws RangeError', async () => {
    const got = await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.colorScale = 'linear';
      await el.updateComplete;
      el.setAttribute('color-scale', 'cubic');
      await el.updateComplete;
      let thrown = null;
      try { el.colorScale = 3; } catch (e) { thrown = `${e.name}: ${e.message}`; }
      return { errors: el.attributeErrors.map((e) => e.message), scale: el.colorScale, thrown, error: el.error };
    });
    assert.match(got.errors[0], /color-scale must be one of linear, sqrt, log, row, max \(got "cubic"\)/);
    assert.equal(got.scale, 'linear');
    assert.match(got.thrown, /^RangeError: color-scale must be one of/);
    assert.equal(got.error, null);
  });
});
