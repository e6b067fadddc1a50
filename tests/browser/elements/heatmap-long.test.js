// An 8,192-token precomputed table actually drawn (issue 19, 20): a causal band of width 50 and
// a sink at token 0, as in scripts/bench/heatmap-first-draw.mjs. At a width where the overview
// (1024² blocks of 8×8 cells) lands 1:1 on the canvas, each block's pixel must be the colour of
// the largest weight of its kept cells (linear and row scales), hatched where all are masked;
// zoomed to 8 px cells the visible cells are drawn one by one with their own weights, with token
// labels; the minimap's frame follows drag and arrow-key pans. The reference is computed here
// in float64 from the array given (row sums over the kept keys), not by the figure's code.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { OVERVIEW } from '../../../web/elements/lib/overview.js';
import { startBrowser } from '../support.js';
import { assertClean, readHeatmap } from './helpers.js';

const N = 8192, K = N / OVERVIEW;  // K×K cells per overview block
const TOLERANCE = 1.5 / 255 / 0.7;  // as zoom.test.js: one LUT step and 8-bit rounding

// Builds the table in the page (one 256 MiB Float32Array), its float64 reference and the figure.
function load(page, { exact = true } = {}) {
  return page.evaluate(async ([n, side, exact]) => {
    await customElements.whenDefined('attn-heatmap');
    const a = new Float32Array(n * n);
    for (let i = 0; i < n; i++) {
      const row = a.subarray(i * n, (i + 1) * n);
      let total = 0;
      for (let j = Math.max(0, i - 50); j <= i; j++) total += (row[j] = Math.exp(-(i - j) / 12));
      total += (row[0] += 0.3);
      for (let j = 0; j <= i; j++) row[j] /= total;
    }
    const sums = new Float64Array(n), tops = new Float64Array(n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j <= i; j++) { sums[i] += a[i * n + j]; tops[i] = Math.max(tops[i], a[i * n + j]); }
    // The weight shown for (i, j) after the causal mask renormalises; null = masked.
    window.__want = (i, j, scale = 'linear') => (j > i ? null : scale === 'row' ? a[i * n + j] / tops[i] : a[i * n + j] / sums[i]);
    window.__block = (bi, bj, k, scale) => {
      let m = null;
      for (let i = bi * k; i < (bi + 1) * k; i++)
        for (let j = bj * k; j < (bj + 1) * k; j++) {
          const w = window.__want(i, j, scale);
          if (w !== null && (m === null || w > m)) m = w;
        }
      return m;
    };
    const el = document.getElementById('big');
    el.style.width = exact ? '1300px' : '';
    el.data = { tokens: Array.from({ length: n }, (_, i) => `t${i}`), attention: a, heads: 1, causal: true };
    if (!(await el.updateComplete)) return el.error;
    if (!exact) return true;
    // The plot exactly `side` px wide: one overview block per canvas pixel (at device pixel ratio 1).
    const body = el.shadowRoot.querySelector('.body');
    el.style.width = `${el.getBoundingClientRect().width - body.clientWidth + el.layout.gutter + 2 + side}px`;
    while (el.layout.cell !== side / n) await new Promise(requestAnimationFrame);
    return el.updateComplete;
  }, [N, OVERVIEW, exact]);
}

// Colour positions of the canvas pixels at CSS (x, y) in the plot (null: not a weight colour, e.g.
// hatched), projected on the low → high line as helpers.readHeatmap does for cells.
function pixels(page, points) {
  return page.evaluate((points) => {
    const el = document.getElementById('big'), canvas = el.shadowRoot.querySelector('canvas.cells');
    const { gutter } = el.layout, ratio = canvas.width / (gutter + el.layout.plotWidth);
    const style = getComputedStyle(el);
    const rgb = (name) => [0, 2, 4].map((i) => parseInt(style.getPropertyValue(name).trim().slice(1 + i, 3 + i), 16));
    const low = rgb('--attn-low'), d = rgb('--attn-high').map((h, c) => h - low[c]);
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(canvas, 0, 0);
    return points.map(([x, y]) => {
      const p = ctx.getImageData(Math.floor((gutter + x) * ratio), Math.floor((gutter + y) * ratio), 1, 1).data;
      const t = d.reduce((s, dc, c) => s + dc * (p[c] - low[c]), 0) / d.reduce((s, dc) => s + dc * dc, 0);
      const off = Math.max(...d.map((dc, c) => Math.abs(p[c] - (low[c] + t * dc))));
      return off > 3 ? null : t;
    });
  }, points);
}

// Overview blocks (bi, bj) to check: the sink column, the band up to the diagonal, the first
// masked block past it, and an empty block far from the band.
const BLOCKS = [3, 125, 500, OVERVIEW - 1].flatMap((bi) => [
  [bi, 0], [bi, 1], [bi, Math.floor(bi / 2)], ...Array.from({ length: 18 }, (_, k) => [bi, bi - 16 + k]),
].filter(([, bj]) => bj >= 0 && bj < N / K));

async function checkOverview(page, scale) {
  const drawn = await pixels(page, BLOCKS.map(([bi, bj]) => [bj + 0.5, bi + 0.5]));
  const want = await page.evaluate(([blocks, k, scale]) => blocks.map(([bi, bj]) => window.__block(bi, bj, k, scale)), [BLOCKS, K, scale]);
  BLOCKS.forEach(([bi, bj], b) => {
    if (want[b] === null) assert.equal(drawn[b], null, `block ${bi},${bj} is masked: hatched, not a weight colour`);
    else assert.ok(drawn[b] !== null && Math.abs(drawn[b] - want[b]) <= TOLERANCE,
      `${scale}: block ${bi},${bj} drawn at ${drawn[b]}, its largest weight's position is ${want[b]}`);
  });
  return { drawn, want };
}

describe('an 8,192-token heatmap, drawn', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ viewport: { width: 1400, height: 1400 } });
    page = await browser.fixture('<attn-heatmap id="big"></attn-heatmap>');
    assert.equal(await load(page), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('the overview: each block the colour of its largest weight (band and sink visible, empty blocks low, masked hatched)', async () => {
    const layout = await page.evaluate(() => document.getElementById('big').layout);
    assert.equal(layout.plotWidth, OVERVIEW);
    const { drawn, want } = await checkOverview(page, 'linear');
    const at = (bi, bj) => drawn[BLOCKS.findIndex(([i, j]) => i === bi && j === bj)];
    // A band block against an empty one: the band is drawn, the empty block is the scale's low end.
    assert.ok(at(500, 499) > 0.05 && at(500, 250) === 0, `band ${at(500, 499)} vs empty ${at(500, 250)}`);
    const masked = want.filter((w) => w === null).length, band = want.filter((w) => w > 0.02).length;
    assert.ok(masked >= 3 && band >= 10, `masked (${masked}) and band (${band}) blocks sampled`);
  });

  it('color-scale="row" recolours the overview from the weights (each row to its largest)', async () => {
    await page.evaluate(() => { document.getElementById('big').colorScale = 'row'; return document.getElementById('big').updateComplete; });
    const { drawn } = await checkOverview(page, 'row');
    assert.ok(drawn[BLOCKS.findIndex(([i, j]) => i === 500 && j === 500)] > 0.99, 'the diagonal is its rows\' largest weight');
    await page.evaluate(() => { document.getElementById('big').colorScale = 'linear'; return document.getElementById('big').updateComplete; });
  });

  it('zoomed to 8 px cells: every visible cell drawn with its own weight, token labels, the exact readout', async () => {
    const blank = await page.evaluate(() => document.getElementById('big').layout.labels);
    assert.equal(blank, false, 'no labels at 0.125 px cells');
    await page.evaluate(() => document.getElementById('big').zoomTo(64, { row: 4000, col: 3990 }));
    const v = await page.evaluate(() => document.getElementById('big').view);
    const layout = await page.evaluate(() => document.getElementById('big').layout);
    assert.equal(layout.cell * v.zoom, 8);
    assert.equal(layout.labels, true, 'labels at 8 px cells');
    const { cells } = await readHeatmap(page, 'big');
    assert.ok(cells.length >= 125 * 125, `${cells.length} visible cells`);
    const want = await page.evaluate((at) => at.map(([i, j]) => window.__want(i, j)), cells.map((c) => [c.i, c.j]));
    const bad = cells.filter((c, k) => (want[k] === null ? c.value !== null : c.value === null || Math.abs(c.value - want[k]) > TOLERANCE));
    assert.deepEqual(bad.slice(0, 3), [], 'each visible cell coloured by its weight, masked cells hatched');
    assert.ok(want.filter((w) => w > 0.05).length > 500 && want.includes(null), 'band and masked cells in view');

    // Labels: ink in the gutter beside a visible row and above a visible column, none at zoom 1.
    const ink = await page.evaluate(([i, j]) => {
      const el = document.getElementById('big'), canvas = el.shadowRoot.querySelector('canvas.cells');
      const box = el.cellBox(i, j), host = el.getBoundingClientRect(), c = canvas.getBoundingClientRect();
      const x = box.x - (c.left - host.left), y = box.y - (c.top - host.top), g = el.layout.gutter;
      const copy = document.createElement('canvas');
      copy.width = canvas.width;
      copy.height = canvas.height;
      const ctx = copy.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(canvas, 0, 0);
      const count = (x0, y0, w, h) => {
        const d = ctx.getImageData(x0, y0, w, h).data, bg = ctx.getImageData(0, 0, 1, 1).data;
        let k = 0;
        for (let p = 0; p < d.length; p += 4) if (Math.abs(d[p] - bg[0]) + Math.abs(d[p + 1] - bg[1]) + Math.abs(d[p + 2] - bg[2]) > 60) k++;
        return k;
      };
      return { row: count(2, Math.round(y), g - 6, 8), column: count(Math.round(x), 2, 8, g - 6) };
    }, [Math.ceil(v.row) + 10, Math.ceil(v.col) + 10]);
    assert.ok(ink.row > 10 && ink.column > 10, `a row's and a column's token drawn in the gutter: ${JSON.stringify(ink)}`);

    const p = await page.evaluate(() => {
      const el = document.getElementById('big'), b = el.cellBox(4000, 3990), r = el.getBoundingClientRect();
      return { x: r.left + b.x + b.width / 2, y: r.top + b.y + b.height / 2 };
    });
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction(() => document.getElementById('big').shadowRoot.querySelector('.readout').textContent.includes('row 4001, column 3991'));
    const readout = await page.locator('#big').locator('.readout').textContent();
    const m = readout.match(/^“t4000” → “t3990”: ([\d.e-]+) · row 4001, column 3991$/);
    const exact = await page.evaluate(() => window.__want(4000, 3990));
    assert.ok(m && Math.abs(Number(m[1]) - exact) < 1e-7, `${readout} shows the weight ${exact}`);
  });

  it('the minimap frame shows the window and follows a drag and Shift+arrow pans', async () => {
    // Read after the next frame: pans redraw (the frame included) in the figure's animation frame.
    const frame = () => page.evaluate(async () => {
      await new Promise(requestAnimationFrame);
      const el = document.getElementById('big'), map = el.shadowRoot.querySelector('.minimap');
      const image = map.querySelector('canvas').getBoundingClientRect(), box = map.querySelector('.viewport').getBoundingClientRect();
      return { x: box.left - image.left, y: box.top - image.top, width: box.width, scale: image.width / 8192, view: el.view };
    });
    assert.equal(await page.locator('#big').locator('.minimap').isVisible(), true);
    const f0 = await frame();
    assert.ok(Math.abs(f0.x - f0.view.col * f0.scale) < 0.5 && Math.abs(f0.y - f0.view.row * f0.scale) < 0.5, `frame at the window: ${JSON.stringify(f0)}`);

    const p = await page.evaluate(() => {
      const el = document.getElementById('big'), b = el.cellBox(4000, 3990), r = el.getBoundingClientRect();
      return { x: r.left + b.x, y: r.top + b.y };
    });
    await page.mouse.move(p.x, p.y);
    await page.mouse.down();
    await page.mouse.move(p.x - 80, p.y, { steps: 4 });
    await page.mouse.up();
    await page.waitForFunction((c) => document.getElementById('big').view.col > c + 9, f0.view.col);
    const f1 = await frame();
    assert.ok(Math.abs(f1.view.col - f0.view.col - 10) < 0.6, `80 px drag = 10 cells: ${f0.view.col} → ${f1.view.col}`);

    await page.locator('#big').locator('.plot').focus();
    for (let k = 0; k < 3; k++) await page.keyboard.press('Shift+ArrowRight');
    await page.waitForFunction((c) => document.getElementById('big').view.col > c + 250, f1.view.col);
    const f2 = await frame();
    assert.ok(f2.x - f1.x > 250 * f2.scale - 1, `the frame moved right with the window: ${f1.x} → ${f2.x} px`);
    assert.ok(Math.abs(f2.x - f2.view.col * f2.scale) < 0.5, 'and is where the window is');
    await page.keyboard.press('Shift+ArrowDown');
    await page.waitForFunction((r) => document.getElementById('big').view.row > r + 50, f2.view.row);
    const f3 = await frame();
    assert.ok(f3.y > f2.y && Math.abs(f3.y - f3.view.row * f3.scale) < 0.5, `down: ${f2.y} → ${f3.y}`);
    assertClean(page, browser);
  });
});

describe('an 8,192-token heatmap on a narrow dark screen', () => {
  let browser, page;
  before(async () => {
    browser = await startBrowser({ colorScheme: 'dark', viewport: { width: 360, height: 740 } });
    page = await browser.fixture('<attn-heatmap id="big"></attn-heatmap>');
    assert.equal(await load(page, { exact: false }), true);
  });
  afterEach(() => browser?.assertNoProblems());
  after(async () => { await browser?.close(); });

  it('fits the screen, draws empty blocks in the dark low colour and masked ones hatched; zooms to labelled 8 px cells', async () => {
    const fit = await page.evaluate(() => {
      const el = document.getElementById('big'), c = el.shadowRoot.querySelector('canvas.cells').getBoundingClientRect();
      return { right: c.right, page: document.documentElement.scrollWidth, plot: el.layout.plotWidth };
    });
    assert.ok(fit.right <= 360 && fit.page <= 360, `no sideways scrolling: ${JSON.stringify(fit)}`);
    // Far from the band the blocks are all 0 (low) below the diagonal and all masked above it.
    const cell = fit.plot / N;
    const [empty, masked] = await pixels(page, [[1000 * cell, 7000 * cell], [7000 * cell, 1000 * cell]]);
    assert.equal(empty, 0, 'empty: the scale\'s low end');
    assert.equal(masked, null, 'masked: hatched');
    await page.evaluate((z) => document.getElementById('big').zoomTo(z, { row: 5000, col: 4990 }), 8 / cell);
    const state = await page.evaluate(() => {
      const el = document.getElementById('big'), map = el.shadowRoot.querySelector('.minimap').getBoundingClientRect();
      const plot = el.shadowRoot.querySelector('.plot').getBoundingClientRect();
      return { size: el.layout.cell * el.view.zoom, labels: el.layout.labels, inside: map.left >= plot.left && map.right <= plot.right };
    });
    assert.ok(Math.abs(state.size - 8) < 1e-9 && state.labels && state.inside, JSON.stringify(state));
    const { cells } = await readHeatmap(page, 'big');
    const want = await page.evaluate((at) => at.map(([i, j]) => window.__want(i, j)), cells.map((c) => [c.i, c.j]));
    const bad = cells.filter((c, k) => (want[k] === null ? c.value !== null : c.value === null || Math.abs(c.value - want[k]) > TOLERANCE));
    assert.deepEqual(bad.slice(0, 3), [], 'dark theme: each visible cell coloured by its weight');
    assertClean(page, browser);
  });
});
