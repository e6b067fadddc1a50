// <attn-compare>: the panels' pixels read back (A and B on the weight scale, A − B on the
// diverging scale, inverted here from the theme's CSS colours) against the float64 reference and
// A − B computed in the test; two heads, two sentences, a model on two texts; the crosshair,
// keyboard and touch; the error for different tokens; SVG data.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, ref, setData } from './helpers.js';

const n = SENTENCE.length, HEADS = 3, dK = 4;
const q = ref.uniform(HEADS * n * dK, 31, -2, 2), k = ref.uniform(HEADS * n * dK, 32, -2, 2);
const DATA = { tokens: SENTENCE, heads: HEADS, dK, Q: Array.from(q), K: Array.from(k) };
const WANT = ref.attention(q, k, k, { dK, heads: HEADS }).weights;
const head = (h) => Array.from(WANT.subarray(h * n * n, (h + 1) * n * n));
const A = head(0), B = head(2), D = A.map((a, c) => a - B[c]);
const MAX = Math.max(...D.map(Math.abs));

/**
 * Reads a panel's canvas at every cell centre. Weight panels: the pixel projected on the
 * --attn-low → --attn-high line. The difference panel: on --attn-bg → --attn-high (positive) or
 * --attn-bg → --attn-negative (negative), whichever the pixel lies on, times the legend's max.
 */
function readPanel(page, id, kind, max = 1) {
  return page.evaluate(([id, kind, max]) => {
    const el = document.getElementById(id);
    const l = el.layout.find((p) => p.kind === kind);
    const canvas = el.shadowRoot.querySelector(`figure[data-panel="${kind}"] canvas.cells`);
    const ratio = canvas.width / (l.gutter + l.cell * l.cols);
    const style = getComputedStyle(el);
    const rgb = (name) => {
      const hex = style.getPropertyValue(name).trim().slice(1);
      return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
    };
    const ctx = new OffscreenCanvas(canvas.width, canvas.height).getContext('2d', { willReadFrequently: true });
    ctx.drawImage(canvas, 0, 0);  // a copy: reading the figure's own canvas often makes Chrome warn
    const image = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const along = (px, from, to) => {
      const d = to.map((t, c) => t - from[c]);
      const t = d.reduce((s, dc, c) => s + dc * (px[c] - from[c]), 0) / d.reduce((s, dc) => s + dc * dc, 0);
      return { t, off: Math.max(...px.map((p, c) => Math.abs(p - (from[c] + t * d[c])))) };
    };
    const lines = kind === 'difference'
      ? [[rgb('--attn-bg'), rgb('--attn-high'), max], [rgb('--attn-bg'), rgb('--attn-negative'), -max]]
      : [[rgb('--attn-low'), rgb('--attn-high'), 1]];
    const values = [];
    for (let i = 0; i < l.rows; i++)
      for (let j = 0; j < l.cols; j++) {
        const x = Math.floor((l.gutter + (j + 0.5) * l.cell) * ratio), y = Math.floor((l.gutter + (i + 0.5) * l.cell) * ratio);
        const at = (y * canvas.width + x) * 4, px = [image[at], image[at + 1], image[at + 2]];
        const fits = lines.map(([from, to, m]) => ({ ...along(px, from, to), m })).filter((f) => f.t >= -0.01).sort((a, b) => a.off - b.off);
        values.push(fits[0] && fits[0].off <= 3 ? fits[0].t * fits[0].m : null);
      }
    return values;
  }, [id, kind, max]);
}

describe('<attn-compare>', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 1000, height: 900 }, contextOptions: { hasTouch: true } });
    page = await browser.fixture(`
      <attn-compare id="heads" src="#run" head-a="0" head-b="2" view="all"></attn-compare>
      <attn-compare id="pair" view="difference"></attn-compare>
      <attn-compare id="files" src-a="#run" src-b="#other" head-b="1" view="side-by-side"></attn-compare>
      <attn-compare id="model" model="use-lite" text-a="The cat sat on the mat." text-b="The dog sat on the mat." layer-a="1" head-a="1" layer-b="1" head-b="1" view="difference"></attn-compare>
      <script type="application/json" id="run">${JSON.stringify(DATA)}</script>
      <script type="application/json" id="other">${JSON.stringify({ ...DATA, tokens: SENTENCE.map((t) => t.toUpperCase()) })}</script>`);
    for (const id of ['heads', 'files']) assert.equal(await page.evaluate(async (id) => {
      await customElements.whenDefined('attn-compare');
      return document.getElementById(id).updateComplete;
    }, id), true, id);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('two heads of one run: A, B and A − B drawn as the reference, the legend spans ±max|A − B|', async () => {
    assertClose(await readPanel(page, 'heads', 'a'), A, 1.5 / 255 / 0.7, 'panel A');
    assertClose(await readPanel(page, 'heads', 'b'), B, 1.5 / 255 / 0.7, 'panel B');
    const max = await page.evaluate(() => document.getElementById('heads').maxDifference);
    assert.ok(Math.abs(max - MAX) < 1e-5, `max ${max} vs ${MAX}`);
    assertClose(await readPanel(page, 'heads', 'difference', MAX), D, 2.5 / 200 * MAX, 'panel A − B');
    assertClose(await page.evaluate(() => Array.from(document.getElementById('heads').difference)), D, 1e-5, 'el.difference');
    const legend = await page.locator('#heads').locator('figure[data-panel="difference"] .legend').textContent();
    assert.ok(legend.startsWith(`−${MAX.toFixed(2)}+${MAX.toFixed(2)}`), legend);
    const titles = await page.locator('#heads').locator('figcaption').allTextContents();
    assert.deepEqual(titles, ['A (head 1)', 'B (head 3)', 'A (head 1) − B (head 3)']);
    // Both sides name their head: the shared head picker is hidden.
    assert.equal(await page.locator('#heads').locator('select[aria-label="Head"]').isVisible(), false);
  });

  it('the crosshair reads A, B and A − B at the hovered cell, in every panel', async () => {
    const box = await page.evaluate(() => document.getElementById('heads').cellBox('b', 7, 1));
    const host = await page.locator('#heads').boundingBox();
    await page.mouse.move(host.x + box.x + box.width / 2, host.y + box.y + box.height / 2);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const c = 7 * n + 1;
    const sign = D[c] > 0 ? '+' : '−';
    const want = `“it” → “cat”: A ${A[c].toFixed(4)} · B ${B[c].toFixed(4)} · A−B ${sign}${Math.abs(D[c]).toFixed(4)}`;
    assert.equal(await page.locator('#heads').locator('.readout').textContent(), want);
  });

  it('keyboard moves the crosshair and the live region says the three values; a tap does too', async () => {
    await page.mouse.move(0, 0);
    await page.locator('#heads').locator('.panels').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    const c = 1 * n + 1;  // the first arrow starts at (0, 0)
    const live = await page.locator('#heads').locator('[aria-live]').textContent();
    assert.equal(live, `“cat” → “cat”: A ${A[c].toFixed(4)} · B ${B[c].toFixed(4)} · A−B ${D[c] > 0 ? '+' : '−'}${Math.abs(D[c]).toFixed(4)}`);
    await page.keyboard.press('End');
    assert.match(await page.locator('#heads').locator('[aria-live]').textContent(), /^“cat” → “\.”: A /);
    await page.locator('#heads').locator('.panels').blur();
    const box = await page.evaluate(() => document.getElementById('heads').cellBox('difference', 3, 4));
    const host = await page.locator('#heads').boundingBox();
    await page.touchscreen.tap(host.x + box.x + box.width / 2, host.y + box.y + box.height / 2);
    assert.match(await page.locator('#heads').locator('[aria-live]').textContent(), /^“on” → “the”: A /);
  });

  it('SVG export: every cell of every panel with its value; A − B equals the test\'s', async () => {
    const cells = await page.evaluate(() => {
      const doc = new DOMParser().parseFromString(document.getElementById('heads').toSVG(), 'image/svg+xml');
      if (doc.querySelector('parsererror')) return null;
      const out = { a: [], b: [], difference: [], texts: [...doc.querySelectorAll('text')].map((t) => t.textContent) };
      for (const r of doc.querySelectorAll('rect[data-panel]')) out[r.dataset.panel].push(Number(r.dataset.value));
      return out;
    });
    assertClose(cells.a, A, 1e-5, 'SVG A');
    assertClose(cells.b, B, 1e-5, 'SVG B');
    assertClose(cells.difference, D, 1e-5, 'SVG A − B');
    assert.ok(cells.texts.includes('A (head 1) − B (head 3)'));
  });

  it('two sentences: difference needs the same tokens (a clear error), side by side works and recovers', async () => {
    const other = { tokens: ['a', 'b', 'c'], attention: [[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]] };
    assert.equal(await setData(page, 'pair', { a: DATA, b: other }), false);
    const error = await page.evaluate(() => document.getElementById('pair').error);
    assert.match(error, /^A and B have different tokens \(A: 11 tokens: “The” “cat” .*; B: 3 tokens: “a” “b” “c”\): the difference needs the same tokens/);
    assert.equal(await page.locator('#pair').locator('[role="alert"]').isVisible(), true);
    const ok = await page.evaluate(async () => {
      const el = document.getElementById('pair');
      el.view = 'side-by-side';
      await el.updateComplete;
      return [el.error, el.weightsB && Array.from(el.weightsB), el.difference];
    });
    assert.equal(ok[0], null);
    assertClose(ok[1], other.attention.flat(), 1e-6, 'B');
    assert.equal(ok[2], null);
    // The same tokens in both: the difference of two sentences' runs.
    const b = { ...DATA, Q: Array.from(ref.uniform(HEADS * n * dK, 40, -2, 2)) };
    assert.equal(await setData(page, 'pair', { a: DATA, b }), true);
    await page.evaluate(async () => { const el = document.getElementById('pair'); el.view = 'difference'; await el.updateComplete; });
    const wantB = ref.attention(Float32Array.from(b.Q), k, k, { dK, heads: HEADS }).weights.subarray(0, n * n);
    const diff = A.map((a, c) => a - wantB[c]);
    assertClose(await page.evaluate(() => Array.from(document.getElementById('pair').difference)), diff, 1e-5, 'two sentences');
    assertClose(await readPanel(page, 'pair', 'difference', Math.max(...diff.map(Math.abs))), diff, 2.5 / 200 * Math.max(...diff.map(Math.abs)), 'drawn');
  });

  it('src-a / src-b with their own head; hide applies to both sides', async () => {
    const got = await page.evaluate(() => {
      const el = document.getElementById('files');
      return { a: Array.from(el.weightsA), b: Array.from(el.weightsB), titles: [...el.shadowRoot.querySelectorAll('figcaption')].map((f) => f.textContent) };
    });
    assertClose(got.a, A, 1e-5, 'A');
    assertClose(got.b, head(1), 1e-5, 'B is head 2 of the other file');
    assert.deepEqual(got.titles, ['A (head 1)', 'B (head 2)']);
    const hidden = await page.evaluate(async () => {
      const el = document.getElementById('files');
      el.setAttribute('hide', '0 10');
      await el.updateComplete;
      return { a: el.result.a.tokens, b: el.result.b.tokens, note: el.shadowRoot.querySelector('.hidden-note').textContent, rows: el.layout.map((p) => p.rows) };
    });
    assert.deepEqual(hidden.a, SENTENCE.slice(1, 10));
    assert.deepEqual(hidden.b, SENTENCE.slice(1, 10).map((t) => t.toUpperCase()));
    assert.deepEqual(hidden.rows, [9, 9]);
    assert.equal(hidden.note, '2 tokens hidden; rows sum to less than 1 (not renormalised)');
  });

  it('aggregates per side: head-a="mean", head-b="max" (float64 here)', async () => {
    const got = await page.evaluate(async () => {
      const el = document.getElementById('heads');
      el.setAttribute('head-a', 'mean');
      el.setAttribute('head-b', 'max');
      await el.updateComplete;
      const out = { a: Array.from(el.weightsA), b: Array.from(el.weightsB), d: Array.from(el.difference), titles: [...el.shadowRoot.querySelectorAll('figcaption')].map((f) => f.textContent) };
      el.setAttribute('head-a', '0');
      el.setAttribute('head-b', '2');
      await el.updateComplete;
      return out;
    });
    const mean = A.map((_, c) => (head(0)[c] + head(1)[c] + head(2)[c]) / 3);
    const max = A.map((_, c) => Math.max(head(0)[c], head(1)[c], head(2)[c]));
    assertClose(got.a, mean, 1e-5, 'mean');
    assertClose(got.b, max, 1e-5, 'max');
    assertClose(got.d, mean.map((m, c) => m - max[c]), 1e-5, 'mean − max');
    assert.deepEqual(got.titles, ['A (mean of heads)', 'B (max of heads)', 'A (mean of heads) − B (max of heads)']);
  });

  it('one model on two texts: the same number of tokens but different ones is an error for the difference', async () => {
    const state = await page.evaluate(async () => {
      const el = document.getElementById('model');
      const ok = await el.updateComplete;
      return { ok, error: el.error };
    });
    assert.equal(state.ok, false);
    assert.match(state.error, /A and B have different tokens .*“cat”.*; B: .*“dog”/);
    const run = await page.evaluate(async () => {
      const el = document.getElementById('model');
      el.view = 'side-by-side';
      await el.updateComplete;
      const model = await el.lens.loadModel();
      const want = model.run('The dog sat on the mat.');
      const n = want.tokens.length;
      return { n, got: Array.from(el.weightsB), want: Array.from(want.layers[1].attention.subarray(n * n, 2 * n * n)), titles: [...el.shadowRoot.querySelectorAll('figcaption')].map((f) => f.textContent) };
    });
    assertClose(run.got, run.want, 1e-6, 'B = layer 2, head 2 of the model on text B');
    assert.deepEqual(run.titles, ['A (layer 2, head 2)', 'B (layer 2, head 2)']);
    assertClean(page, browser);
  });
});
