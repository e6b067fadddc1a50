// head="mean" | "max" and layer="rollout" in the figures: what is drawn (el.weights, canvas
// pixels, SVG data-weight) against mean, max and rollout computed here in float64, not through
// the engine; for precomputed weights, vectors, projections and the model.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { requireDependency, startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, changes, headReduce, nested, readHeatmap, recordChanges, ref, rollout, setData, vectors } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;  // one 8-bit colour step on the ramp, with margin

// [layers][heads][n][n] nested → per layer a flat Float64Array [heads·n·n].
const flatLayers = (attention) => attention.map((layer) => Float64Array.from(layer.flat(2)));

const read = (page, id, what) => page.evaluate(async ([id, what]) => {
  const el = document.getElementById(id);
  await el.updateComplete;
  const v = what === 'row' ? el.row : el.weights;
  return v ? Array.from(v) : null;
}, [id, what]);

const setState = (page, id, state) => page.evaluate(async ([id, state]) => {
  const el = document.getElementById(id);
  Object.assign(el, state);
  return el.updateComplete;
}, [id, state]);

describe('aggregates: head="mean"|"max", layer="rollout"', () => {
  let browser, page;
  const layers = 3, heads = 4, n = 9;
  const tokens = SENTENCE.slice(0, n);
  const attention = ref.randomAttention(layers, heads, n, 11, 3);
  const flat = flatLayers(attention);
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="map" head="mean" layer="1"></attn-heatmap>' +
      '<attn-heatmap id="dark" theme="dark" head="max"></attn-heatmap><attn-bars id="bars" head="mean"></attn-bars>' +
      '<attn-heads id="heads" head="max"></attn-heads><attn-pipeline id="pipe" head="mean"></attn-pipeline>');
    for (const id of ['map', 'dark']) assert.equal(await setData(page, id, { tokens, attention }), true);
    await recordChanges(page, 'map');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('precomputed weights, head="mean": el.weights and the canvas are the float64 mean of the layer\'s heads', async () => {
    const want = headReduce(flat[1], heads, n * n, 'mean');
    assertClose(await read(page, 'map'), Array.from(want), 1e-6, 'el.weights');
    const { values } = await readHeatmap(page, 'map');
    assertClose(values, Array.from(want), TOLERANCE, 'drawn cells');
    const picker = await page.evaluate(() => {
      const [layer, head] = document.getElementById('map').shadowRoot.querySelectorAll('select');
      return { layer: [...layer.options].map((o) => o.value), head: [...head.options].map((o) => o.value), value: head.value };
    });
    assert.deepEqual(picker, { layer: ['0', '1', '2', 'rollout'], head: ['0', '1', '2', '3', 'mean', 'max'], value: 'mean' });
    assert.match(await page.locator('#map').locator('.legend .note').textContent(), /layer 2, mean of 4 heads/);
    assertClean(page, browser);
  });

  it('head="max" (dark theme): element-wise max; the legend and the SVG say rows do not add up to 1', async () => {
    const want = headReduce(flat[0], heads, n * n, 'max');
    assertClose(await read(page, 'dark'), Array.from(want, Math.fround), 0, 'el.weights (max of float32 inputs is exact)');
    const { values } = await readHeatmap(page, 'dark');
    assertClose(values, Array.from(want), TOLERANCE, 'drawn cells, dark theme');
    assert.match(await page.locator('#dark').locator('.legend .note').textContent(), /max over 4 heads: element-wise, so rows do not add up to 1/);
    const svg = await page.evaluate(() => document.getElementById('dark').toSVG());
    const weights = [...svg.matchAll(/data-weight="([^"]+)"/g)].map((m) => Number(m[1]));
    assertClose(weights, Array.from(want), 0.005 + 1e-9, 'SVG data-weight (2 decimals)');
    assert.match(svg, /data-aggregate="max"[^>]*>layer 1, max over 4 heads: element-wise, so rows do not add up to 1/);
    const rowSum = want.subarray(0, n).reduce((a, b) => a + b, 0);
    assert.ok(rowSum > 1.001, `this max row sums past 1 (${rowSum})`);
  });

  it('layer="rollout": el.weights is the float64 rollout; the head picker is disabled; picking from the toolbar fires change', async () => {
    await page.locator('#map').locator('select').first().selectOption('rollout');
    assert.deepEqual((await changes(page)).at(-1), { name: 'layer', value: 'rollout', user: true });
    assert.equal(await page.evaluate(() => document.getElementById('map').getAttribute('layer')), 'rollout');
    const want = rollout(flat, heads, n);
    assertClose(await read(page, 'map'), Array.from(want), 2e-6, 'rollout');
    const { values } = await readHeatmap(page, 'map');
    assertClose(values, Array.from(want), TOLERANCE, 'drawn rollout');
    assert.equal(await page.evaluate(() => document.getElementById('map').shadowRoot.querySelectorAll('select')[1].disabled), true);
    // Back to one head: the head picker returns, the weights are that head's.
    await page.locator('#map').locator('select').first().selectOption('2');
    await page.locator('#map').locator('select').nth(1).selectOption('3');
    assertClose(await read(page, 'map'), Array.from(flat[2].subarray(3 * n * n, 4 * n * n)), 1e-7, 'layer 3, head 4');
  });

  it('vectors (3 heads) in <attn-bars>: head="mean" is the mean of the engine-free reference rows', async () => {
    const h3 = 3, d = vectors(SENTENCE, { dK: 12, seed: 5, spread: 1.5 });
    await setData(page, 'bars', { tokens: SENTENCE, heads: h3, Q: nested(d.q, SENTENCE.length, 12), K: nested(d.k, SENTENCE.length, 12) });
    await setState(page, 'bars', { query: 7 });
    const m = SENTENCE.length;
    // [n][heads·d] rows are split per head (columns h·4…h·4+3): the same layout as [heads][n][d]
    const q = new Float32Array(h3 * m * 4), k = new Float32Array(h3 * m * 4);
    for (let h = 0; h < h3; h++)
      for (let i = 0; i < m; i++)
        for (let c = 0; c < 4; c++) {
          q[(h * m + i) * 4 + c] = d.q[i * 12 + h * 4 + c];
          k[(h * m + i) * 4 + c] = d.k[i * 12 + h * 4 + c];
        }
    const perHead = ref.attention(q, k, k, { dK: 4, heads: h3 }).weights;
    const mean = headReduce(perHead, h3, m * m, 'mean');
    assertClose(await read(page, 'bars', 'row'), Array.from(mean.subarray(7 * m, 8 * m)), 1e-5, 'mean row of "it"');
    assert.match(await page.locator('#bars').locator('.caption').textContent(), /mean of 3 heads/);
    await setState(page, 'bars', { head: 'max' });
    const max = headReduce(perHead, h3, m * m, 'max');
    assertClose(await read(page, 'bars', 'row'), Array.from(max.subarray(7 * m, 8 * m)), 1e-5, 'max row of "it"');
  });

  it('projections in <attn-heads>: head="max" opens the element-wise max of the multi-head weights', async () => {
    const dModel = 8, m = SENTENCE.length;
    const x = ref.uniform(m * dModel, 41), wQ = ref.uniform(dModel * dModel, 42), wK = ref.uniform(dModel * dModel, 43);
    const wV = ref.uniform(dModel * dModel, 44);
    await setData(page, 'heads', { tokens: SENTENCE, heads: 4, X: nested(x, m, dModel), W_Q: nested(wQ, dModel, dModel), W_K: nested(wK, dModel, dModel), W_V: nested(wV, dModel, dModel) });
    const want = headReduce(ref.multiHead(x, { dModel, heads: 4, wQ, wK, wV }).weights, 4, m * m, 'max');
    assertClose(await read(page, 'heads'), Array.from(want), 1e-5, 'el.weights');
    const detail = await page.evaluate(async () => {
      const el = document.getElementById('heads');
      await el.heatmap.updateComplete;
      return { weights: Array.from(el.heatmap.weights), title: el.shadowRoot.querySelector('.detail-title').textContent,
        selected: [...el.shadowRoot.querySelectorAll('[aria-selected="true"]')].map((c) => `${c.dataset.layer}/${c.dataset.head}`) };
    });
    assertClose(detail.weights, Array.from(want), 1e-5, 'detail heatmap');
    assert.equal(detail.title, 'Layer 1, max over 4 heads (element-wise, so rows do not add up to 1)');
    assert.deepEqual(detail.selected, ['0/max'], 'the grid\'s max tile is the chosen one');
  });

  it('bad values: a clear RangeError from the property, an error state for the pipeline and for rollout of cross-attention', async () => {
    const r = await page.evaluate(async () => {
      const el = document.getElementById('map');
      const errors = [];
      for (const [name, value] of [['head', 'sum'], ['layer', 'mean'], ['head', -1]])
        try { el[name] = value; } catch (e) { errors.push(`${e.name}: ${e.message}`); }
      const pipe = document.getElementById('pipe');
      pipe.data = { tokens: ['a', 'b'], Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]] };
      const pipeOk = await pipe.updateComplete;
      const cross = document.createElement('attn-heatmap');
      cross.setAttribute('layer', 'rollout');
      document.body.append(cross);
      cross.data = { queryTokens: ['x', 'y'], keyTokens: ['a', 'b', 'c'], attention: [[[[1, 0, 0], [0, 1, 0]]], [[[1, 0, 0], [0, 0, 1]]]] };
      const crossOk = await cross.updateComplete;
      return { errors, pipeOk, pipeError: pipe.error, crossOk, crossError: cross.error, head: el.head };
    });
    assert.deepEqual(r.errors.map((e) => e.split(':')[0]), ['RangeError', 'RangeError', 'RangeError']);
    assert.match(r.errors[0], /head must be a whole number ≥ 0 or "mean" or "max" \(got "sum"\)/);
    assert.match(r.errors[1], /layer must be a whole number ≥ 0 or "rollout"/);
    assert.equal(r.head, 3, 'state unchanged after bad values');
    assert.equal(r.pipeOk, false);
    assert.match(r.pipeError, /attn-pipeline shows one head at a time/);
    assert.equal(r.crossOk, false);
    assert.match(r.crossError, /layer="rollout" needs self-attention: these weights are 2×3/);
  });
});

describe('aggregates of a real model (USE-lite)', () => {
  let browser;
  before(async () => { browser = await startBrowser(); });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('layer="rollout" over the model\'s own layers equals the float64 rollout of el.result.weights', async () => {
    const page = await browser.fixture('<attn-heatmap id="m" model="use-lite" layer="rollout" text="The cat sat on the mat because it was tired."></attn-heatmap>');
    const r = await page.evaluate(async () => {
      const el = document.getElementById('m');
      await customElements.whenDefined('attn-heatmap');
      const ok = await el.updateComplete;
      if (!ok) return { ok, error: el.error };
      return { ok, n: el.result.n, heads: el.result.heads, layers: el.result.weights.map((w) => Array.from(w)), shown: Array.from(el.weights) };
    });
    // scripts/build.sh builds the add-on: a figure without it is a failure here, not a pass.
    requireDependency('the model add-on (USE-lite)', r.ok, `scripts/build.sh builds it; the figure says: ${r.error}`);
    assert.equal(r.layers.length, 2);
    const want = rollout(r.layers.map((l) => Float64Array.from(l)), r.heads, r.n);
    assertClose(r.shown, Array.from(want), 1e-5, 'rollout of USE-lite');
    assertClean(page, browser);
  });
});
