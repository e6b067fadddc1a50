// Cross-attention data (queryTokens × keyTokens): non-square tables in the heatmap, bars and
// heads, from precomputed weights (a translation's alignment, as in Bahdanau et al. 2015),
// vectors (Q with nQ rows, K/V with nK rows) and projections (X, X_KV), against float64.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { assertClean, assertClose, nested, parseSVG, readHeatmap, ref, setData } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;

// The sentence pair of Bahdanau et al.'s Figure 3: the decoder (French, queries) attends to the
// encoder (English, keys); "zone économique européenne" reverses "European Economic Area".
const ENGLISH = ['The', 'agreement', 'on', 'the', 'European', 'Economic', 'Area', 'was', 'signed', 'in', 'August', '1992', '.', '<end>'];
const FRENCH = ['L\'', 'accord', 'sur', 'la', 'zone', 'économique', 'européenne', 'a', 'été', 'signé', 'en', 'août', '1992', '.', '<end>'];
const ALIGNED = [0, 1, 2, 3, 6, 5, 4, 7, 7, 8, 9, 10, 11, 12, 13];  // English word each French word mostly looks at

function alignment() {
  const next = ref.random(7);
  return FRENCH.map((_, i) => {
    const row = ENGLISH.map((__, j) => Math.exp(-2.2 * Math.abs(j - ALIGNED[i]) + 0.3 * next()));
    if (i === 8) row[8] += 0.8;  // "été" also looks ahead at "signed"
    const sum = row.reduce((a, b) => a + b, 0);
    return row.map((x) => x / sum);
  });
}

describe('cross-attention: queryTokens × keyTokens', () => {
  let browser, page;
  const weights = alignment();
  const nQ = FRENCH.length, nK = ENGLISH.length;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap><attn-bars id="bars" query="européenne"></attn-bars>' +
      '<attn-heads id="heads"></attn-heads><attn-heatmap id="vec"></attn-heatmap>');
    const data = { queryTokens: FRENCH, keyTokens: ENGLISH, attention: weights };
    for (const id of ['map', 'bars']) assert.equal(await setData(page, id, data), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('a translation\'s alignment draws as an nQ×nK heatmap with the given weights, rows French, columns English', async () => {
    const r = await page.evaluate(() => {
      const el = document.getElementById('map'), res = el.result;
      return { n: res.n, nQ: res.nQ, nK: res.nK, q: res.queryTokens, k: res.keyTokens, tokens: res.tokens,
        length: res.weights[0].length, layout: el.layout, label: el.shadowRoot.querySelector('.plot').getAttribute('aria-label') };
    });
    assert.deepEqual([r.n, r.nQ, r.nK, r.length], [nQ, nQ, nK, nQ * nK]);
    assert.deepEqual(r.q, FRENCH);
    assert.deepEqual(r.tokens, FRENCH);
    assert.deepEqual(r.k, ENGLISH);
    assert.equal(r.layout.plotWidth / r.layout.cell, nK);
    assert.equal(r.layout.plotHeight / r.layout.cell, nQ);
    assert.match(r.label, /15 query tokens × 14 key tokens/);
    const drawn = await readHeatmap(page, 'map');
    assert.deepEqual([drawn.nQ, drawn.nK], [nQ, nK]);
    assertClose(drawn.values, weights.flat(), TOLERANCE, 'drawn cells');
    // Hovering "européenne" × "European" reads both token lists.
    const box = await page.evaluate(() => document.getElementById('map').cellBox(6, 4));
    const host = await page.locator('#map').boundingBox();
    await page.mouse.move(host.x + box.x + box.width / 2, host.y + box.y + box.height / 2);
    await page.waitForFunction(() => document.getElementById('map').shadowRoot.querySelector('.readout').textContent.includes('→'));
    const readout = await page.locator('#map').locator('.readout').textContent();
    assert.ok(readout.startsWith(`“européenne” → “European”: ${Math.fround(weights[6][4])}`.slice(0, 30)), readout);
    const svg = await page.evaluate(() => document.getElementById('map').toSVG());
    const parsed = await parseSVG(page, svg);
    assert.ok(parsed.ok);
    for (const t of [...FRENCH, ...ENGLISH]) assert.ok(parsed.texts.includes(t), `SVG label ${t}`);
    const cells = [...svg.matchAll(/data-weight="([^"]+)"/g)].map((m) => Number(m[1]));
    assert.equal(cells.length, nQ * nK);
    assertClose(cells, weights.flat(), 0.005 + 1e-9, 'SVG data-weight');
    assert.match(parsed.title, /15 query × 14 key tokens/);
    assertClean(page, browser);
  });

  it('bars: the French query picks from French tokens, the bars are the English keys', async () => {
    const r = await page.evaluate(() => {
      const el = document.getElementById('bars');
      return { query: el.query, row: Array.from(el.row), queries: [...el.shadowRoot.querySelectorAll('[role="radio"]')].map((b) => b.textContent),
        keys: [...el.shadowRoot.querySelectorAll('li .label')].map((l) => l.textContent), live: el.shadowRoot.querySelector('[aria-live]').textContent };
    });
    assert.equal(r.query, 6);
    assert.deepEqual(r.queries, FRENCH);
    assert.deepEqual(r.keys, ENGLISH);
    assertClose(r.row, weights[6], 1e-6, 'row of “européenne”');
    assert.equal(r.row.indexOf(Math.max(...r.row)), 4, '“européenne” looks at “European”');
  });

  it('vectors: Q with nQ rows, K and V with nK rows; mask="causal" is top-left aligned; keyMask has nK entries', async () => {
    const dK = 6, q = ref.uniform(nQ * dK, 3), k = ref.uniform(nK * dK, 4), v = ref.uniform(nK * dK, 5);
    const json = { queryTokens: FRENCH, keyTokens: ENGLISH, Q: nested(q, nQ, dK), K: nested(k, nK, dK), V: nested(v, nK, dK) };
    assert.equal(await setData(page, 'vec', json), true);
    const plain = await page.evaluate(() => Array.from(document.getElementById('vec').weights));
    assertClose(plain, Array.from(ref.attention(q, k, v, { dK }).weights), 1e-5, 'weights');
    const keyMask = ENGLISH.map((t) => (t === '<end>' ? 0 : 1));
    assert.equal(await setData(page, 'vec', { ...json, keyMask, causal: true }), true);
    const r = await page.evaluate(() => {
      const el = document.getElementById('vec');
      return { w: Array.from(el.weights), mask: el.mask, masked: [el.isMasked(2, 3), el.isMasked(3, 3), el.isMasked(14, 13)] };
    });
    assert.equal(r.mask, 'causal padding');
    assert.deepEqual(r.masked, [true, false, true]);
    const want = ref.attention(q, k, v, { dK, causal: true, keyMask: Uint8Array.from(keyMask) }).weights;
    assertClose(r.w, Array.from(want), 1e-5, 'causal + padding');
    const drawn = await readHeatmap(page, 'vec');
    for (let i = 0; i < nQ; i++)
      for (let j = 0; j < nK; j++) {
        const value = drawn.values[i * nK + j];
        if (j > i || keyMask[j] === 0) assert.equal(value, null, `cell ${i},${j} is hatched`);
        else assert.ok(Math.abs(value - want[i * nK + j]) <= TOLERANCE, `cell ${i},${j}`);
      }
    const bad = await setData(page, 'vec', { ...json, keyMask: [1, 1, 0] });
    assert.equal(bad, false);
    assert.match(await page.evaluate(() => document.getElementById('vec').error), /keyMask must list one 1 \(keep\) or 0 \(padding\) per key token \(14\)/);
  });

  it('projections: X (queries) and X_KV (keys) in <attn-heads>, thumbnails and the detail keep nQ×nK', async () => {
    const dModel = 8, heads = 2;
    const x = ref.uniform(nQ * dModel, 21), xKV = ref.uniform(nK * dModel, 22);
    const [wQ, wK, wV] = [23, 24, 25].map((s) => ref.uniform(dModel * dModel, s));
    const json = { queryTokens: FRENCH, keyTokens: ENGLISH, heads, X: nested(x, nQ, dModel), X_KV: nested(xKV, nK, dModel),
      W_Q: nested(wQ, dModel, dModel), W_K: nested(wK, dModel, dModel), W_V: nested(wV, dModel, dModel) };
    assert.equal(await setData(page, 'heads', json), true);
    const want = ref.multiHead(x, { dModel, heads, wQ, wK, wV, xKV }).weights;
    const r = await page.evaluate(async () => {
      const el = document.getElementById('heads');
      el.head = 1;
      await el.updateComplete;
      await el.heatmap.updateComplete;
      return { all: Array.from(el.result.weights[0]), detail: Array.from(el.heatmap.weights), layout: el.heatmap.layout,
        thumbs: el.shadowRoot.querySelectorAll('[role="gridcell"]:not(.aggregate)').length,
        aggregates: [...el.shadowRoot.querySelectorAll('[role="gridcell"].aggregate')].map((c) => `${c.dataset.layer}/${c.dataset.head}`) };
    });
    assertClose(r.all, Array.from(want), 1e-5, 'multi-head cross weights');
    assertClose(r.detail, Array.from(want.subarray(nQ * nK, 2 * nQ * nK)), 1e-5, 'detail = head 2');
    assert.deepEqual([r.layout.nQ, r.layout.nK, r.thumbs], [nQ, nK, 2]);
    assert.deepEqual(r.aggregates, ['0/mean', '0/max'], 'mean and max tiles; no rollout for cross-attention');
    const svg = await page.evaluate(() => document.getElementById('heads').toSVG());
    assert.ok((await parseSVG(page, svg)).ok);
  });

  it('errors name what is wrong: weights of the wrong shape, X_KV without keyTokens, too many key tokens', async () => {
    const cases = [
      [{ queryTokens: ['a', 'b'], keyTokens: ['x', 'y', 'z'], attention: [[0.5, 0.5], [1, 0]] }, /attention matrices are 2×2 but there are 2 query and 3 key tokens \(need 2×3\)/],
      [{ tokens: ['a', 'b'], X: [[1, 0], [0, 1]], X_KV: [[1, 0]], W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]] }, /X_KV \(cross-attention\) needs keyTokens/],
      [{ queryTokens: ['a'], keyTokens: Array.from({ length: 9000 }, (_, i) => `t${i}`), attention: [[1]] }, /keyTokens: 9000 tokens is more than this figure can show \(at most 8192\)/],
      [{ queryTokens: ['a'], keyTokens: ['x', 'y'], Q: [[1, 0]], K: [[1, 0]] }, /K has 1 rows but there are 2 key tokens/],
    ];
    for (const [data, message] of cases) {
      assert.equal(await setData(page, 'vec', data), false);
      assert.match(await page.evaluate(() => document.getElementById('vec').error), message);
    }
  });
});
