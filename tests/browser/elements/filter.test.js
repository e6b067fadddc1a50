// Hiding tokens (`hide`, `renormalize`) in every figure: what is drawn equals the float64
// reference with the hidden rows and columns removed, renormalised here in the test when asked.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { assertClean, assertClose, changes, readHeatmap, recordChanges, ref, setData, vectors } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;
const TOKENS = ['[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '.', '[SEP]'];
const data = vectors(TOKENS, { dK: 6, seed: 9, spread: 1.5 });
const n = TOKENS.length;

/** The reference weights without rows/columns `hidden`, rows renormalised if asked. */
function expected(hidden, { renormalize = false, causal = false } = {}) {
  const full = ref.attention(data.q, data.k, data.v, { dK: 6, causal }).weights;
  const keep = [...Array(n).keys()].filter((i) => !hidden.includes(i));
  const out = [];
  for (const i of keep) {
    const row = keep.map((j) => full[i * n + j]);
    const sum = row.reduce((a, b) => a + b, 0);
    out.push(...(renormalize ? row.map((w) => w / sum) : row));
  }
  return { keep, weights: out };
}

describe('hiding tokens', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 900, height: 900 } });
    page = await browser.fixture(`
      <attn-heatmap id="map" hide="[CLS] [SEP]"></attn-heatmap>
      <attn-bars id="bars" hide="0 8" renormalize query="cat"></attn-bars>
      <attn-lines id="lines" hide='["[CLS]", 8]' query="it"></attn-lines>
      <attn-heads id="heads" hide="[CLS] [SEP]" renormalize></attn-heads>`);
    for (const id of ['map', 'bars', 'lines', 'heads']) assert.equal(await setData(page, id, data.json), true, id);
    await recordChanges(page, 'map');
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('heatmap: hidden rows and columns are gone; the rest keep their weights (rows sum to < 1), and it says so', async () => {
    const want = expected([0, 8]);
    const drawn = await readHeatmap(page, 'map');
    assert.equal(drawn.n, n - 2);
    assertClose(drawn.values, want.weights, TOLERANCE, 'drawn cells');
    const got = await page.evaluate(() => {
      const el = document.getElementById('map');
      return { tokens: el.tokens, weights: Array.from(el.weights), note: el.shadowRoot.querySelector('.hidden-note').textContent, hidden: el.result.hidden };
    });
    assert.deepEqual(got.tokens, TOKENS.slice(1, -1));
    assertClose(got.weights, want.weights, 1e-5, 'el.weights');
    assert.equal(got.note, '2 tokens hidden; rows sum to less than 1 (not renormalised)');
    assert.deepEqual(got.hidden, { queries: [0, 8], keys: [0, 8], renormalized: false, count: 2 });
    const sums = [];
    for (let i = 0; i < n - 2; i++) sums.push(want.weights.slice(i * (n - 2), (i + 1) * (n - 2)).reduce((a, b) => a + b));
    assert.ok(sums.every((s) => s < 1 - 1e-3), 'the test data loses weight to the hidden tokens');
  });

  it('renormalize: each kept row divided by its sum (bars), and the live region counts the hidden tokens', async () => {
    const want = expected([0, 8], { renormalize: true });
    const got = await page.evaluate(() => {
      const el = document.getElementById('bars');
      return { row: Array.from(el.row), query: el.query, tokens: el.tokens, note: el.shadowRoot.querySelector('.hidden-note').textContent };
    });
    assert.equal(got.query, 1, '“cat” is row 1 once [CLS] is hidden');
    assertClose(got.row, want.weights.slice(1 * 7, 2 * 7), 1e-5, 'bars of “cat”');
    assert.ok(Math.abs(got.row.reduce((a, b) => a + b) - 1) < 1e-5);
    assert.equal(got.note, '2 tokens hidden; rows renormalised to sum to 1');
    await page.locator('#bars').locator('[role="radio"]').nth(2).click();
    const live = await page.locator('#bars').locator('[aria-live]').textContent();
    assert.match(live, /^“sat” \(token 3 of 7\) attends most to .* \(2 tokens hidden; rows renormalised to sum to 1\.\)$/);
  });

  it('lines: a JSON list mixes texts and indices; the focused row is the filtered reference row', async () => {
    const want = expected([0, 8]);
    const lines = await page.evaluate(() => {
      const el = document.getElementById('lines');
      el.query = 2;
      const doc = new DOMParser().parseFromString(el.toSVG(), 'image/svg+xml');
      return [...doc.querySelectorAll('path[data-query]')].map((p) => [Number(p.dataset.key), Number(p.dataset.weight)]);
    });
    const row = want.weights.slice(2 * 7, 3 * 7);
    assert.deepEqual(lines.map(([j]) => j), row.map((w, j) => (w >= 0.01 ? j : -1)).filter((j) => j >= 0));
    for (const [j, w] of lines) assert.ok(Math.abs(w - row[j]) < 1e-5, `key ${j}`);
  });

  it('heads: every thumbnail and the opened head use the kept tokens', async () => {
    const want = expected([0, 8], { renormalize: true });
    const got = await page.evaluate(async () => {
      const el = document.getElementById('heads');
      await el.heatmap.updateComplete;
      return { tokens: el.heatmap.tokens, weights: Array.from(el.heatmap.weights) };
    });
    assert.deepEqual(got.tokens, TOKENS.slice(1, -1));
    assertClose(got.weights, want.weights, 1e-5, 'the opened head');
  });

  it('the property reflects, fires change, and indices and masks keep their meaning', async () => {
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.hide = [3, 'the'];
      el.mask = 'causal';
      await el.updateComplete;
    });
    assert.equal(await page.evaluate(() => document.getElementById('map').getAttribute('hide')), '3 the');
    assert.deepEqual((await changes(page)).find((c) => c.name === 'hide'), { name: 'hide', value: [3, 'the'], user: false });
    const want = expected([1, 3, 5], { causal: true });
    const drawn = await readHeatmap(page, 'map');
    const m = want.keep.length;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        if (j > i) assert.equal(drawn.values[i * m + j], null, `cell ${i},${j} is hatched`);
        else assert.ok(Math.abs(drawn.values[i * m + j] - want.weights[i * m + j]) <= TOLERANCE, `cell ${i},${j}`);
      }
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.hide = null;
      el.mask = 'none';
      await el.updateComplete;
    });
    assert.equal(await page.evaluate(() => document.getElementById('map').hasAttribute('hide')), false);
    assert.equal((await readHeatmap(page, 'map')).n, n);
    assert.equal(await page.evaluate(() => document.getElementById('map').shadowRoot.querySelector('.hidden-note').hidden), true);
  });

  it('bad values are clear errors and the figure recovers', async () => {
    const errors = await page.evaluate(async (all) => {
      const el = document.getElementById('map'), got = [];
      el.hide = '99';
      await el.updateComplete;
      got.push(el.error);
      el.hide = all;
      await el.updateComplete;
      got.push(el.error);
      try { el.hide = [1.5]; } catch (e) { got.push(`${e.name}: ${e.message}`); }
      try { el.hide = [{}]; } catch (e) { got.push(`${e.name}: ${e.message}`); }
      el.hide = '[CLS]';
      got.push(await el.updateComplete, el.tokens.length);
      return got;
    }, TOKENS);
    assert.match(errors[0], /hide: token index 99 is past the last token \(8\)/);
    assert.match(errors[1], /hide removes every query token/);
    assert.match(errors[2], /^RangeError: hide\[0\] must be a token index/);
    assert.match(errors[3], /^TypeError: hide\[0\] must be a token's text or index/);
    assert.deepEqual(errors.slice(4), [true, n - 1]);
    assertClean(page, browser);
  });
});
