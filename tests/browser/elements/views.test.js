// The views as a new user meets them: the <attn-heads> grid's mean / max / rollout tiles, token
// hiding in <attn-pipeline>, a causal mask kept by original positions when cross-attention hides
// different tokens on each side, and bad attribute values said in the figure. What is drawn is
// compared with float64 computations written here, not through the engine.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { assertClean, assertClose, headReduce, nested, readHeatmap, ref, rollout, setData } from './helpers.js';

// Causal [layers][heads][n][n] weights (row i spreads over keys 0…i), as a causal LM gives.
function causalAttention(layers, heads, n, seed) {
  const next = ref.random(seed);
  return Array.from({ length: layers }, () => Array.from({ length: heads }, () => Array.from({ length: n }, (_, i) => {
    const row = Array.from({ length: n }, (_, j) => (j <= i ? next() ** 2 + 0.01 : 0));
    const sum = row.reduce((a, b) => a + b, 0);
    return row.map((x) => x / sum);
  })));
}

const tiles = (page, id) => page.evaluate((id) => [...document.getElementById(id).shadowRoot.querySelectorAll('[role="gridcell"]')]
  .map((c) => ({ at: `${c.dataset.layer}/${c.dataset.head}`, selected: c.getAttribute('aria-selected') === 'true', label: c.getAttribute('aria-label') })), id);

const shown = (page, id) => page.evaluate(async (id) => {
  const el = document.getElementById(id);
  await el.updateComplete;
  await el.heatmap?.updateComplete;
  return { layer: el.layer, head: el.head, weights: Array.from(el.weights), detail: el.heatmap && Array.from(el.heatmap.weights),
    title: el.shadowRoot.querySelector('.detail-title')?.textContent };
}, id);

describe('views a new user tries', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture(`
      <attn-heads id="heads"></attn-heads>
      <attn-pipeline id="pipe" hide="[CLS] 3" mask="causal"></attn-pipeline>
      <attn-heatmap id="cross" hide="<s> x"></attn-heatmap>
      <attn-heatmap id="bad" tokens="a b c" attention="[[1,0,0],[0.5,0.5,0],[0.2,0.3,0.5]]" head="-1"></attn-heatmap>
      <attn-bars id="attr-cross" query-tokens="le chat" key-tokens='["the", "black", "cat"]' attention="[[0.7,0.2,0.1],[0.05,0.15,0.8]]" query="chat"></attn-bars>
      <attn-heatmap id="no-tokens" attention="[[1,0],[0.5,0.5]]"></attn-heatmap>`);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  const layers = 3, heads = 4, n = 7;
  const attention = causalAttention(layers, heads, n, 5);
  const flat = attention.map((l) => Float64Array.from(l.flat(2)));
  const tokens = ['<s>', 'Once', 'upon', 'a', 'time', 'there', 'was'];

  it('<attn-heads>: mean and max tiles per layer and a rollout tile, each the float64 aggregate; max rows stay unnormalised under the causal mask', async () => {
    // One Float32Array per layer, flat [heads·n·n], as a model's run gives them.
    assert.equal(await setData(page, 'heads', { tokens, attention: [Float32Array.from(flat[0])], causal: true, heads: 3 }), false);
    assert.match(await page.evaluate(() => document.getElementById('heads').error), /attention\[0\] has 196 numbers; heads·nQ·nK is 3·7·7 = 147/);
    assert.equal(await setData(page, 'heads', { tokens, attention: flat.map((l) => Float32Array.from(l)), causal: true }), true);
    const grid = await tiles(page, 'heads');
    const want = [...Array.from({ length: layers }, (_, l) => [...Array.from({ length: heads }, (_, h) => `${l}/${h}`), `${l}/mean`, `${l}/max`]).flat(), 'rollout/mean'];
    assert.deepEqual(grid.map((t) => t.at), want);
    assert.match(grid.find((t) => t.at === '1/max').label, /^Max, layer 2, max over 4 heads: .*rows do not add up to 1/);
    for (const [at, expected] of [
      ['1/max', headReduce(flat[1], heads, n * n, 'max')],
      ['2/mean', headReduce(flat[2], heads, n * n, 'mean')],
      ['rollout/mean', rollout(flat, heads, n)],
    ]) {
      const [layer, head] = at.split('/');
      await page.locator('#heads').locator(`[role="gridcell"][data-layer="${layer}"][data-head="${head}"]`).click();
      const s = await shown(page, 'heads');
      assertClose(s.weights, Array.from(expected), 1e-6, `${at}: el.weights`);
      assertClose(s.detail, Array.from(expected), 1e-6, `${at}: the detail heatmap draws the same numbers (not renormalised)`);
      assert.deepEqual((await tiles(page, 'heads')).filter((t) => t.selected).map((t) => t.at), [at]);
    }
    const s = await shown(page, 'heads');
    assert.deepEqual([s.layer, s.title], ['rollout', 'Attention rollout of 3 layers (rollout rows add up to 1)']);
    // Keyboard: from the last head of layer 1 → Mean → Max, down to layer 2's Max, Enter opens it.
    await page.locator('#heads').locator('[role="gridcell"][data-layer="0"][data-head="3"]').click();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    const k = await shown(page, 'heads');
    assert.deepEqual([k.layer, k.head], [1, 'max']);
    await page.keyboard.press('PageDown');  // the rollout row
    await page.keyboard.press('Enter');
    assert.equal((await shown(page, 'heads')).layer, 'rollout');
    const svg = await page.evaluate(() => document.getElementById('heads').toSVG());
    for (const label of ['Mean', 'Max', 'Rollout', 'All layers']) assert.ok(svg.includes(`>${label}</text>`), label);
    assertClean(page, browser);
  });

  it('<attn-heads> with hide and a causal mask: the detail keeps the rows as filtered (sums < 1), as float64 here', async () => {
    const got = await page.evaluate(async () => {
      const el = document.getElementById('heads');
      el.layer = 0;
      el.head = 2;
      el.hide = '<s>';
      await el.updateComplete;
      await el.heatmap.updateComplete;
      return { detail: Array.from(el.heatmap.weights), tokens: el.heatmap.tokens, note: el.shadowRoot.querySelector('.hidden-note').textContent };
    });
    const keep = [1, 2, 3, 4, 5, 6];
    const want = keep.flatMap((i) => keep.map((j) => attention[0][2][i][j]));
    assertClose(got.detail, want, 1e-6, 'layer 1 head 3 without <s>');
    assert.deepEqual(got.tokens, tokens.slice(1));
    assert.equal(got.note, '1 token hidden; rows sum to less than 1 (not renormalised)');
    await page.evaluate(async () => { const el = document.getElementById('heads'); el.hide = null; await el.updateComplete; });
  });

  // Self-attention vectors with a [CLS]; the pipeline hides [CLS] and token 3.
  const pipeTokens = ['[CLS]', 'we', 'need', 'more', 'data', 'now'];
  const m = pipeTokens.length, dK = 3, dV = 2;
  const q = ref.uniform(m * dK, 61, -2, 2), k = ref.uniform(m * dK, 62, -2, 2), v = ref.uniform(m * dV, 63);
  const keep = [1, 2, 4, 5];
  const pick = (matrix, width, cols = null) => keep.flatMap((i) => (cols ?? Array.from({ length: width }, (_, j) => j)).map((j) => matrix[i * width + j]));

  it('<attn-pipeline> hides tokens from every step; without renormalize A keeps the hidden keys\' share, with it they are masked before the softmax', async () => {
    assert.equal(await setData(page, 'pipe', { tokens: pipeTokens, Q: nested(q, m, dK), K: nested(k, m, dK), V: nested(v, m, dV) }), true);
    const read = () => page.evaluate(async () => {
      const el = document.getElementById('pipe');
      await el.updateComplete;
      const s = el.steps;
      return { tokens: el.tokens, weights: Array.from(s.weights), scores: Array.from(s.scores), output: Array.from(s.output), sums: Array.from(el.result.sums),
        rows: el.shadowRoot.querySelectorAll('figure[data-step="weights"] tbody tr').length,
        cols: el.shadowRoot.querySelectorAll('figure[data-step="weights"] thead th[scope="col"]').length,
        note: el.shadowRoot.querySelector('.hidden-note').textContent, hidden: el.result.hidden };
    });
    const full = ref.attention(q, k, v, { dK, dV, causal: true });
    let got = await read();
    assert.deepEqual(got.tokens, ['we', 'need', 'data', 'now']);
    assert.deepEqual([got.rows, got.cols], [4, 4]);
    assertClose(got.scores, pick(full.scores, m, keep), 1e-4, 'QKᵀ of the kept tokens');
    assertClose(got.weights, pick(full.weights, m, keep), 1e-5, 'A: the full softmax, hidden columns left out');
    assertClose(got.output, pick(full.output, dV), 1e-5, 'A·V: the model\'s output rows');
    assert.equal(got.note, '2 tokens hidden; rows sum to less than 1 (not renormalised)');
    assert.deepEqual(got.hidden, { queries: [0, 3], keys: [0, 3], renormalized: false, count: 2 });
    await page.evaluate(() => { document.getElementById('pipe').renormalize = true; });
    got = await read();
    const kept = ref.attention(q, k, v, { dK, dV, causal: true, keyMask: pipeTokens.map((_, j) => (keep.includes(j) ? 1 : 0)) });
    assertClose(got.weights, pick(kept.weights, m, keep), 1e-5, 'A renormalised over the kept keys');
    assertClose(got.output, pick(kept.output, dV), 1e-5, 'A·V of the kept values');
    for (let r = 0; r < keep.length; r++) assert.ok(Math.abs(got.weights.slice(r * 4, r * 4 + 4).reduce((a, b) => a + b) - 1) < 1e-5, `row ${r} sums to 1`);
    assert.equal(got.note, '2 tokens hidden; rows renormalised to sum to 1');
    const svg = await page.evaluate(() => document.getElementById('pipe').toSVG());
    assert.ok(!svg.includes('>[CLS]<') && svg.includes('>data<'), 'the SVG leaves [CLS] out');
  });

  it('cross-attention with a causal mask: hiding different tokens on each side still masks by the original positions', async () => {
    // Decoder queries attend to the same sequence's keys, causally (query i sees key j ≤ i).
    const queryTokens = ['<s>', 'a', 'x', 'b', 'c'], keyTokens = ['<s>', 'a', 'x', 'b', 'c', 'd', 'e'];
    const nQ = queryTokens.length, nK = keyTokens.length;
    const next = ref.random(71);
    const weights = Array.from({ length: nQ }, (_, i) => {
      const row = Array.from({ length: nK }, (_, j) => (j <= i ? next() + 0.05 : 0));
      const sum = row.reduce((a, b) => a + b, 0);
      return row.map((w) => w / sum);
    });
    // hide="<s> x" plus keys 'd' (index 5) only exists on the key side: rows 1, 3, 4 × columns 1, 3, 4, 5, 6.
    assert.equal(await setData(page, 'cross', { queryTokens, keyTokens, attention: weights, causal: true }), true);
    await page.evaluate(async () => { const el = document.getElementById('cross'); el.hide = '<s> x d'; await el.updateComplete; });
    const rows = [1, 3, 4], cols = [1, 3, 4, 6];
    const drawn = await readHeatmap(page, 'cross');
    assert.deepEqual([drawn.nQ, drawn.nK], [rows.length, cols.length]);
    const masked = await page.evaluate(() => {
      const el = document.getElementById('cross'), { nQ, nK } = el.result;
      return Array.from({ length: nQ }, (_, i) => Array.from({ length: nK }, (_, j) => el.isMasked(i, j)));
    });
    rows.forEach((i, r) => cols.forEach((j, c) => {
      const hatched = j > i;
      assert.equal(masked[r][c], hatched, `isMasked(${r}, ${c}) = original (${i}, ${j})`);
      const value = drawn.values[r * cols.length + c];
      if (hatched) assert.equal(value, null, `(${i}, ${j}) is drawn hatched`);
      else assert.ok(Math.abs(value - weights[i][j]) < 1.5 / 255 / 0.7, `(${i}, ${j}): drawn ${value}, want ${weights[i][j]}`);
    }));
    assertClean(page, browser);
  });

  it('cross-attention from attributes (query-tokens, key-tokens); data attributes without tokens say what is missing', async () => {
    const got = await page.evaluate(async () => {
      const bars = document.getElementById('attr-cross'), bare = document.getElementById('no-tokens');
      await customElements.whenDefined('attn-bars');
      return { ok: await bars.updateComplete, shape: [bars.result.nQ, bars.result.nK], keys: bars.result.keyTokens, query: bars.query,
        row: Array.from(bars.row), bare: await bare.updateComplete, message: bare.error };
    });
    assert.deepEqual([got.ok, got.shape, got.keys, got.query], [true, [2, 3], ['the', 'black', 'cat'], 1]);
    assertClose(got.row, [0.05, 0.15, 0.8], 1e-6, 'the row of "chat"');
    assert.equal(got.bare, false);
    assert.match(got.message, /^tokens must be a list of words \(got missing\)/);
  });

  it('bad attribute values are said in the figure, which keeps its last good state; a good value clears the message', async () => {
    const state = () => page.evaluate(async () => {
      const el = document.getElementById('bad');
      await customElements.whenDefined('attn-heatmap');
      await el.updateComplete;
      const note = el.shadowRoot.querySelector('[part="attribute-error"]');
      return { head: el.head, error: el.error, note: note.hidden ? null : note.textContent, drawn: !el.shadowRoot.querySelector('.body').hidden,
        errors: el.attributeErrors.map((e) => `${e.name}: ${e.error.name}`) };
    });
    let s = await state();
    assert.deepEqual([s.head, s.error, s.drawn], [0, null, true]);
    assert.equal(s.note, 'head="-1": head must be a whole number ≥ 0 or "mean" or "max" (got "-1")');
    assert.deepEqual(s.errors, ['head: RangeError']);
    await page.evaluate(() => {
      const el = document.getElementById('bad');
      el.setAttribute('head', '0');
      el.setAttribute('query', '7');
      el.setAttribute('temperature', 'hot');
    });
    s = await state();
    assert.equal(s.note, 'query="7": past the last token: the data has 3 tokens (0 to 2); showing token 2' +
      'temperature="hot": temperature must be a number > 0 (got "hot")');
    await page.evaluate(() => {
      const el = document.getElementById('bad');
      el.removeAttribute('temperature');
      el.query = 1;
    });
    s = await state();
    assert.deepEqual([s.note, s.errors], [null, []]);
    assertClean(page, browser);
  });
});
