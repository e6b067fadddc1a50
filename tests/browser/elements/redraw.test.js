// Redraws: every one fires `render` (a change made while the update loop was winding down used to
// be dropped: updateComplete resolved, nothing was drawn, no event), and recomputing after a
// temperature, scale or mask change reuses the figure's n²-sized arrays instead of allocating.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, readHeatmap, ref, setData, vectors } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;  // an 8-bit step on the ramp's widest channel, with margin

describe('figure redraws', () => {
  let browser, page;
  const data = vectors(SENTENCE, { dK: 8, seed: 5, spread: 1.5 });
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap><attn-bars id="bars"></attn-bars>');
    assert.equal(await setData(page, 'map', data.json), true);
    assert.equal(await setData(page, 'bars', data.json), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  for (const id of ['map', 'bars']) {
    it(`${id}: a change made right after a render event is drawn and fires render too`, async () => {
      const got = await page.evaluate(async (id) => {
        const el = document.getElementById(id);
        const results = [];
        for (const [first, second] of [[2, 3], [0.5, 4]]) {
          // The first change's render event resumes us while the update loop is still finishing.
          const rendered = new Promise((resolve) => el.addEventListener('render', resolve, { once: true }));
          el.temperature = first;
          await rendered;
          let fired = false;
          el.addEventListener('render', () => { fired = true; }, { once: true });
          el.temperature = second;
          const ok = await el.updateComplete;
          results.push({ ok, fired, temperature: el.temperature, scale: el.effectiveScale });
        }
        // Scale and mask changes the same way.
        for (const [name, value, temperature] of [['scale', 'none', 1.5], ['mask', 'causal', 2.5]]) {
          const rendered = new Promise((resolve) => el.addEventListener('render', resolve, { once: true }));
          el.temperature = temperature;
          await rendered;
          let fired = false;
          el.addEventListener('render', () => { fired = true; }, { once: true });
          el[name] = value;
          await el.updateComplete;
          results.push({ fired, [name]: el[name], masked: el.isMasked(0, 1) });
        }
        el.temperature = 1;
        el.scale = 'auto';
        el.mask = 'none';
        await el.updateComplete;
        return results;
      }, id);
      const d = 1 / Math.sqrt(8);
      assert.deepEqual(got.map(({ scale, ...rest }) => rest), [
        { ok: true, fired: true, temperature: 3 },
        { ok: true, fired: true, temperature: 4 },
        { fired: true, masked: false },
        { fired: true, mask: 'causal', masked: true },
      ]);
      // Each drawn with what the second change asked for.
      assert.ok(Math.abs(got[0].scale - d / 3) < 1e-12, `scale ${got[0].scale}`);
      assert.ok(Math.abs(got[1].scale - d / 4) < 1e-12, `scale ${got[1].scale}`);
      assert.equal(got[2].scale, 'none');
    });
  }

  it('the heatmap draws what the last change asked for, with the weights in reused arrays', async () => {
    const seen = await page.evaluate(async () => {
      const el = document.getElementById('map');
      const buffers = [];
      for (const temperature of [2, 3, 2, 3]) {
        el.temperature = temperature;
        await el.updateComplete;
        buffers.push(el.result.weights[0]);
      }
      // Two arrays, handed out in turn: the previous result stays intact while the next is computed.
      return { alternate: buffers[0] === buffers[2] && buffers[1] === buffers[3] && buffers[0] !== buffers[1],
        memory: [el.lens.memory().inUse] };
    });
    assert.equal(seen.alternate, true);
    const { values } = await readHeatmap(page, 'map');
    const want = ref.attention(data.q, data.k, data.v, { dK: 8, scale: 1 / Math.sqrt(8) / 3 }).weights;
    assertClose(values, Array.from(want), TOLERANCE, 'drawn weights at temperature 3');
    const engine = await page.evaluate(() => Array.from(document.getElementById('map').weights));
    assertClose(engine, Array.from(want), 1e-5, 'el.weights at temperature 3');
    // Many redraws leave the engine's heap as it was.
    const heap = await page.evaluate(async () => {
      const el = document.getElementById('map');
      const before = el.lens.memory().inUse;
      for (let i = 0; i < 30; i++) {
        el.temperature = 1 + (i % 5) / 2;
        el.mask = i % 3 ? 'causal' : 'none';
        await el.updateComplete;
      }
      el.temperature = 1;
      el.mask = 'none';
      await el.updateComplete;
      return { before, after: el.lens.memory().inUse };
    });
    assert.equal(heap.after, heap.before);
    assertClean(page, browser);
  });

  it('precomputed weights re-weighted by temperature go into reused arrays too', async () => {
    const weights = ref.attention(data.q, data.k, data.v, { dK: 8 }).weights;
    const rows = Array.from({ length: SENTENCE.length }, (_, i) => Array.from(weights.subarray(i * 11, (i + 1) * 11)));
    assert.equal(await setData(page, 'map', { tokens: SENTENCE, attention: rows }), true);
    const got = await page.evaluate(async () => {
      const el = document.getElementById('map');
      const buffers = [];
      for (const temperature of [2, 0.5, 2]) {
        el.temperature = temperature;
        await el.updateComplete;
        buffers.push(el.result.weights[0]);
      }
      return { alternate: buffers[0] === buffers[2] && buffers[0] !== buffers[1], weights: Array.from(el.weights) };
    });
    assert.equal(got.alternate, true);
    // w^(1/T) renormalised, T = 2, in float64.
    const want = [];
    for (let i = 0; i < 11; i++) {
      const row = Array.from(weights.subarray(i * 11, (i + 1) * 11), (w) => Math.fround(w) ** 0.5);
      const sum = row.reduce((a, b) => a + b, 0);
      want.push(...row.map((w) => w / sum));
    }
    assertClose(got.weights, want, 1e-5, 'weights at temperature 2');
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.temperature = 1;
      await el.updateComplete;
    });
  });
});
