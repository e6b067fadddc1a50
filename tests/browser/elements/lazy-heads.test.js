// The heatmap computes the head it shows: after a temperature, scale or mask change only that
// head is recomputed, other heads when first read (head switch, Mean/Max, exports, result.weights).
// Every path is checked against float64 attention computed here (tests/js/reference.js): the
// drawn pixels, el.weights, the SVG's data-weight of a head not drawn, result.weights of every
// head, the keyboard readout; and each redraw fires `render` exactly once.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { startBrowser } from '../support.js';
import { SENTENCE, assertClean, assertClose, headReduce, readHeatmap, readPNG, ref } from './helpers.js';

const TOLERANCE = 1.5 / 255 / 0.7;  // one 8-bit colour step on the ramp, with margin
const SVG_TOLERANCE = 0.005 + 1e-6;  // the SVG writes numbers to 2 decimals
const n = SENTENCE.length, heads = 4, dK = 8, size = n * n;
const q = ref.uniform(heads * n * dK, 21, -1.5, 1.5), k = ref.uniform(heads * n * dK, 22, -1.5, 1.5);
const v = ref.uniform(heads * n * dK, 23);
const DATA = { tokens: SENTENCE, heads, dK, Q: Array.from(q), K: Array.from(k), V: Array.from(v) };

// Float64 weights of every head [heads·n·n] at this temperature / mask.
const want = ({ temperature = 1, causal = false } = {}) =>
  ref.attention(q, k, v, { dK, heads, causal, scale: 1 / Math.sqrt(dK) / temperature }).weights;
const head = (weights, h) => Array.from(weights.subarray(h * size, (h + 1) * size));

// Sets properties on #map, waits, returns what the test reads and how many `render` events fired.
const step = (page, state) => page.evaluate(async (state) => {
  const el = document.getElementById('map');
  let renders = 0;
  const count = () => { renders++; };
  el.addEventListener('render', count);
  Object.assign(el, state);
  const ok = await el.updateComplete;
  el.removeEventListener('render', count);
  return { ok, renders, weights: Array.from(el.weights), head: el.head };
}, state);

describe('the heatmap computes the head it shows, other heads on demand', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-heatmap id="map"></attn-heatmap>');
    const ok = await page.evaluate(async (data) => {
      const el = document.getElementById('map');
      el.data = data;
      return el.updateComplete;
    }, DATA);
    assert.equal(ok, true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('a temperature change recomputes the shown head only; a head switch then shows the new head\'s weights', async () => {
    const t2 = want({ temperature: 2 });
    let got = await step(page, { temperature: 2 });
    assert.deepEqual([got.ok, got.renders], [true, 1]);
    assertClose(got.weights, head(t2, 0), 1e-5, 'el.weights, head 1 at T = 2');
    // Only head 0 was computed for this state (the point of the change).
    const computed = await page.evaluate(async () => {
      const { lazyOf } = await import('/elements/lib/lazy-weights.js');
      const el = document.getElementById('map');
      const lazy = lazyOf(el.result.weights);
      return lazy && [0, 1, 2, 3].map((h) => lazy.computed(0, h));
    });
    assert.deepEqual(computed, [true, false, false, false]);
    for (const h of [3, 1]) {
      got = await step(page, { head: h });
      assert.deepEqual([got.ok, got.renders, got.head], [true, 1, h]);
      assertClose(got.weights, head(t2, h), 1e-5, `el.weights, head ${h + 1} at T = 2`);
      const { values } = await readHeatmap(page, 'map');
      assertClose(values, head(t2, h), TOLERANCE, `drawn cells, head ${h + 1} at T = 2`);
    }
    // A second change while head 2 (index 1) is shown, then back to head 1 (index 0): not stale.
    const t3 = want({ temperature: 3, causal: true });
    got = await step(page, { temperature: 3, mask: 'causal' });
    assertClose(got.weights, head(t3, 1), 1e-5, 'el.weights, head 2 at T = 3, causal');
    got = await step(page, { head: 0 });
    assertClose(got.weights, head(t3, 0), 1e-5, 'el.weights, head 1 at T = 3, causal');
    const { values } = await readHeatmap(page, 'map');
    for (let c = 0; c < size; c++) {
      if (c % n > Math.floor(c / n)) assert.equal(values[c], null, `cell ${c} is hatched (masked)`);
      else assert.ok(Math.abs(values[c] - t3[c]) <= TOLERANCE, `drawn cell ${c}: ${values[c]} vs ${t3[c]}`);
    }
    assertClean(page, browser);
  });

  it('the Mean and Max views after a change average every head of the new state', async () => {
    await step(page, { temperature: 1, mask: 'none', head: 0 });
    const t15 = want({ temperature: 1.5 });
    let got = await step(page, { temperature: 1.5 });
    assertClose(got.weights, head(t15, 0), 1e-5, 'head 1 at T = 1.5');
    got = await step(page, { head: 'mean' });
    assert.deepEqual([got.ok, got.renders], [true, 1]);
    const mean = Array.from(headReduce(t15, heads, size, 'mean'));
    assertClose(got.weights, mean, 1e-5, 'el.weights, mean at T = 1.5');
    assertClose((await readHeatmap(page, 'map')).values, mean, TOLERANCE, 'drawn mean at T = 1.5');
    // A change while the mean is shown recomputes every head.
    const t4 = want({ temperature: 4 });
    got = await step(page, { temperature: 4 });
    assert.equal(got.renders, 1);
    assertClose(got.weights, Array.from(headReduce(t4, heads, size, 'mean')), 1e-5, 'el.weights, mean at T = 4');
    got = await step(page, { head: 'max' });
    assertClose(got.weights, Array.from(headReduce(t4, heads, size, 'max')), 1e-5, 'el.weights, max at T = 4');
    await step(page, { temperature: 1, head: 0 });
  });

  it('exports and result.weights give correct numbers for heads that were never drawn', async () => {
    const t25 = want({ temperature: 2.5 });
    await step(page, { temperature: 2.5, head: 0 });
    const got = await page.evaluate(async () => {
      const el = document.getElementById('map');
      const { heatmapSVG } = await import('/elements/svg/heatmap.js');
      // The figure's own SVG of the shown head, and the pure SVG function asked for head 3 (what
      // the command line and a page exporting another head call): data-weight per cell.
      const weightsOf = (svg) => [...svg.matchAll(/data-weight="([^"]+)"/g)].map((m) => Number(m[1]));
      const shown = weightsOf(el.toSVG());
      const other = weightsOf(heatmapSVG(el.result, el.theme, { layer: 0, head: 2 }));
      const all = Array.from(el.result.weights[0]);  // reading a layer fills its missing heads
      return { shown, other, all };
    });
    assertClose(got.shown, head(t25, 0), SVG_TOLERANCE, 'toSVG(), head 1');
    assertClose(got.other, head(t25, 2), SVG_TOLERANCE, 'heatmapSVG of head 3, never drawn');
    assertClose(got.all, Array.from(t25), 1e-5, 'result.weights[0], all heads');
    // PNG export of a head switched to afterwards: rasterised from the same SVG.
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.head = 3;
      await el.updateComplete;
    });
    // The PNG decoded: one pixel per cell, read back on the ramp, is head 4's weight there.
    const png = await readPNG(page, 'map');
    assert.deepEqual([png.width, png.height], [Math.round(png.svgWidth * 2), Math.round(png.svgHeight * 2)]);
    assertClose(png.cells.map((c) => c.weight), head(t25, 3), SVG_TOLERANCE, 'toSVG() after switching to head 4');
    assertClose(png.cells.map((c) => c.value), head(t25, 3), TOLERANCE, 'PNG cells after switching to head 4');
    await step(page, { temperature: 1, head: 0 });
  });

  it('the keyboard readout and the live region read the head shown after a switch', async () => {
    const t2 = want({ temperature: 2 });
    await step(page, { temperature: 2, head: 0 });
    await step(page, { head: 2 });
    await page.locator('#map').locator('.plot').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    const said = await page.evaluate(async () => {
      const el = document.getElementById('map');
      await new Promise(requestAnimationFrame);  // the readout is redrawn once per frame
      return { live: el.shadowRoot.querySelector('[aria-live]').textContent, readout: el.shadowRoot.querySelector('.readout').textContent };
    });
    // Row 2 ("cat"), column 2 ("cat"): to 4 decimals in the live region, in full in the readout.
    const value = t2[2 * size + 1 * n + 1];
    const spoken = said.live.match(/: ([0-9.]+)/);
    assert.ok(spoken, said.live);
    assert.ok(Math.abs(Number(spoken[1]) - value) <= 5e-5, `${said.live} vs ${value}`);
    const shown = said.readout.match(/: ([0-9.e-]+) ·/);
    assert.ok(shown && Math.abs(Number(shown[1]) - value) <= 1e-6, `${said.readout} vs ${value}`);
    await step(page, { temperature: 1, head: 0 });
  });

  it('hidden tokens: the head switched to is filtered from its own new weights', async () => {
    const t2 = want({ temperature: 2 });
    await step(page, { temperature: 2, head: 0 });
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.setAttribute('hide', '0 10');
      el.setAttribute('renormalize', '');
      await el.updateComplete;
    });
    const got = await step(page, { head: 3 });
    const keep = Array.from({ length: n - 2 }, (_, i) => i + 1);
    const expected = [];
    for (const i of keep) {
      const row = keep.map((j) => t2[3 * size + i * n + j]);
      const sum = row.reduce((a, b) => a + b, 0);
      expected.push(...row.map((w) => w / sum));
    }
    assertClose(got.weights, expected, 1e-5, 'head 4, tokens 0 and 10 hidden, renormalised');
    assertClose((await readHeatmap(page, 'map')).values, expected, TOLERANCE, 'drawn, hidden tokens');
    await page.evaluate(async () => {
      const el = document.getElementById('map');
      el.removeAttribute('hide');
      el.removeAttribute('renormalize');
      el.temperature = 1;
      el.head = 0;
      await el.updateComplete;
    });
  });

  it('n = 512, h = 8 (the frame benchmark\'s figure): a render listener attached before the second change fires; the heads shown are right', async () => {
    const N = 512, H = 8, D = 64;
    const [bq, bk] = [ref.uniform(H * N * D, 71), ref.uniform(H * N * D, 72)];
    const got = await page.evaluate(async ([tokens, q, k, H, D]) => {
      const el = document.getElementById('map');
      el.data = { tokens, heads: H, dK: D, Q: q, K: k };
      await el.updateComplete;
      const renders = [];
      let count = 0;
      el.addEventListener('render', () => { count++; });
      for (const temperature of [2, 3]) {  // issue 9: the second change's once-listener never fired
        let fired = false;
        el.addEventListener('render', () => { fired = true; }, { once: true });
        const before = count;
        el.temperature = temperature;
        await el.updateComplete;
        renders.push({ fired, events: count - before });
      }
      const head0 = Array.from(el.weights.subarray(0, 2 * 512));  // rows 0 and 1 of head 1
      const before = count;
      el.head = 5;
      await el.updateComplete;
      renders.push({ fired: true, events: count - before });
      const head5 = Array.from(el.weights.subarray(300 * 512, 302 * 512));  // rows 300, 301 of head 6
      return { renders, head0, head5 };
    }, [Array.from({ length: N }, (_, i) => `t${i}`), bq, bk, H, D]);
    assert.deepEqual(got.renders, [{ fired: true, events: 1 }, { fired: true, events: 1 }, { fired: true, events: 1 }]);
    // Float64 attention of the two heads alone (the others do not matter to them), at T = 3.
    const one = (h) => ref.attention(bq.subarray(h * N * D, (h + 1) * N * D), bk.subarray(h * N * D, (h + 1) * N * D),
      bk.subarray(h * N * D, (h + 1) * N * D), { dK: D, scale: 1 / Math.sqrt(D) / 3 }).weights;
    assertClose(got.head0, Array.from(one(0).subarray(0, 2 * N)), 1e-5, 'n = 512, head 1, rows 0–1');
    assertClose(got.head5, Array.from(one(5).subarray(300 * N, 302 * N)), 1e-5, 'n = 512, head 6, rows 300–301');
    await page.evaluate(async (data) => {
      const el = document.getElementById('map');
      el.data = data;
      el.temperature = 1;
      el.head = 0;
      await el.updateComplete;
    }, DATA);
  });

  it('precomputed weights: a head switch after a temperature change re-weights that head', async () => {
    const attention = ref.randomAttention(1, heads, n, 31, 2)[0];  // [heads][n][n]
    const got = await page.evaluate(async ([tokens, attention]) => {
      const el = document.getElementById('map');
      el.data = { tokens, attention };
      await el.updateComplete;
      el.temperature = 2;
      await el.updateComplete;
      el.head = 2;
      await el.updateComplete;
      return Array.from(el.weights);
    }, [SENTENCE, attention]);
    const expected = [];
    for (const row of attention[2]) {
      const w = row.map((x) => Math.fround(x) ** 0.5);
      const sum = w.reduce((a, b) => a + b, 0);
      expected.push(...w.map((x) => x / sum));
    }
    assertClose(got, expected, 1e-5, 'precomputed head 3 at T = 2');
  });
});

describe('figures showing several heads compute each of them for the new state', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser();
    page = await browser.fixture('<attn-lines id="lines" heads="1 3" query="4"></attn-lines>' +
      '<attn-compare id="cmp" head-a="0" head-b="2" view="all"></attn-compare>');
    const ok = await page.evaluate(async (data) => {
      const out = [];
      for (const id of ['lines', 'cmp']) {
        const el = document.getElementById(id);
        el.data = data;
        out.push(await el.updateComplete);
      }
      return out;
    }, DATA);
    assert.deepEqual(ok, [true, true]);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('<attn-lines heads="1 3">: after a temperature change both heads\' lines carry their float64 weights', async () => {
    const t2 = want({ temperature: 2 });
    const boxes = await page.evaluate(async () => {
      const el = document.getElementById('lines');
      el.temperature = 2;
      await el.updateComplete;
      return [...el.toSVG().matchAll(/data-box-head="(\d+)" data-box-key="(\d+)" data-weight="([^"]+)"/g)]
        .map((m) => ({ head: Number(m[1]), key: Number(m[2]), weight: Number(m[3]) }));
    });
    assert.deepEqual([...new Set(boxes.map((b) => b.head))], [1, 3]);
    assert.ok(boxes.length >= 2 * (n - 1), `${boxes.length} weight boxes`);
    for (const { head: h, key, weight } of boxes)
      assert.ok(Math.abs(weight - t2[h * size + 4 * n + key]) <= 1e-6, `head ${h}, row 4, key ${key}: ${weight} vs ${t2[h * size + 4 * n + key]}`);
  });

  it('<attn-compare head-a="0" head-b="2">: after a mask change, A, B and A − B are those of the new state', async () => {
    const t = want({ temperature: 1.5, causal: true });
    const got = await page.evaluate(async () => {
      const el = document.getElementById('cmp');
      el.temperature = 1.5;
      el.mask = 'causal';
      await el.updateComplete;
      return { a: Array.from(el.weightsA), b: Array.from(el.weightsB), d: Array.from(el.difference) };
    });
    assertClose(got.a, head(t, 0), 1e-5, 'A = head 1');
    assertClose(got.b, head(t, 2), 1e-5, 'B = head 3');
    assertClose(got.d, head(t, 0).map((x, c) => x - t[2 * size + c]), 2e-5, 'A − B');
  });
});
