// color-scale in Node: the mapping (lib/color-scale.js) against a float64 re-statement of its
// definition, and every figure's SVG export (heatmap cells and embedded image, heads thumbnails,
// pipeline steps, lines' boxes, compare panels, generate's tints, the CLI) coloured by it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PNG } from 'pngjs';

import { render } from '../../web/cli/render.js';
import { COLOR_SCALES, LOG_FLOOR, colorPositions, legendTicks, parseColorScale } from '../../web/elements/lib/color-scale.js';
import { computeWeights } from '../../web/elements/lib/compute.js';
import { parseData } from '../../web/elements/lib/data.js';
import { themeFor } from '../../web/elements/lib/theme.js';
import { compareSVG } from '../../web/elements/svg/compare.js';
import { generateSVG } from '../../web/elements/svg/generate.js';
import { headsSVG } from '../../web/elements/svg/heads.js';
import { heatmapSVG } from '../../web/elements/svg/heatmap.js';
import { linesSVG } from '../../web/elements/svg/lines.js';

import * as ref from './reference.js';

const resultFor = (json, mask = 'none') => computeWeights(null, parseData(json), { scale: 'auto', temperature: 1, mask });
const images = (svg) => [...svg.matchAll(/<image [^>]*href="data:image\/png;base64,([^"]+)"/g)].map((m) => PNG.sync.read(Buffer.from(m[1], 'base64')));
const rgbOf = (fill) => (fill.startsWith('#') ? [1, 3, 5].map((i) => parseInt(fill.slice(i, i + 2), 16)) : fill.match(/\d+/g).map(Number));
// A colour's place on the theme's low → high line (projection; independent of color.js).
const along = (theme, rgb) => {
  const d = theme.high.map((hc, c) => hc - theme.low[c]);
  return d.reduce((a, dc, c) => a + dc * (rgb[c] - theme.low[c]), 0) / d.reduce((a, dc) => a + dc * dc, 0);
};
const STEP = 1 / 212 + 1e-9;  // one 8-bit step on the light ramp's widest channel (0x1f → 0xf3)

// The definitions, in float64, row by row; masked cells (mask[c] = 1) count for no maximum.
function reference(kind, weights, rows, cols, mask = null, top = null) {
  const w = Array.from(weights, Number);
  let all = 0;
  w.forEach((x, c) => { if (!mask?.[c] && x > all) all = x; });  // NaN is no maximum
  if (top !== null) all = top;
  return w.map((x, c) => {
    const i = Math.floor(c / cols);
    let rowMax = 0;
    for (let j = 0; j < cols; j++) if (!mask?.[i * cols + j] && w[i * cols + j] > rowMax) rowMax = w[i * cols + j];
    if (!(x > 0)) return 0;
    const t = kind === 'sqrt' ? Math.sqrt(x) : kind === 'log' ? Math.log(x / 0.001) / Math.log(1000)
      : kind === 'row' ? (rowMax > 0 ? x / rowMax : 0) : kind === 'max' ? (all > 0 ? x / all : 0) : x;
    return Math.min(1, Math.max(0, t));
  });
}

function close(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let c = 0; c < want.length; c++)
    assert.ok(Math.abs(got[c] - want[c]) <= tolerance, `${what}[${c}]: got ${got[c]}, want ${want[c]} (±${tolerance})`);
}

describe('color-scale mapping', () => {
  const rows = 7, cols = 9;
  const weights = ref.uniform(rows * cols, 2, 0, 0.4);
  weights[3] = 0; weights[4] = 1e-5; weights[5] = LOG_FLOOR; weights[6] = NaN;  // 0, below and at the floor, NaN
  for (let j = 0; j < cols; j++) weights[4 * cols + j] = 0;  // an all-zero row
  const mask = new Uint8Array(rows * cols);
  mask[2 * cols + 1] = 1;  // a masked cell that would be its row's largest
  weights[2 * cols + 1] = 5;

  for (const kind of COLOR_SCALES) {
    it(`${kind}: positions match the float64 definition (zeros, NaN, the floor, an empty row, masks)`, () => {
      const got = colorPositions(kind, weights, rows, cols, mask);
      const want = reference(kind, weights, rows, cols, mask);
      // linear hands the weights back as they are (the drawing clamps them; NaN draws as 0).
      const shown = (x, c) => (mask[c] || (kind === 'linear' && !(x >= 0)) ? 0 : kind === 'linear' ? Math.min(1, x) : x);
      close(Array.from(got, shown), want.map((x, c) => (mask[c] ? 0 : x)), 1e-6, kind);
      if (kind !== 'linear') for (const x of got) assert.ok(x >= 0 && x <= 1, `${kind}: ${x} in [0, 1]`);
    });
  }

  it('linear gives the weights back (no copy); max can share a given top', () => {
    assert.equal(colorPositions('linear', weights, rows, cols), weights);
    const w = new Float32Array([0.1, 0.2, 0.4, 0.05]);
    close(colorPositions('max', w, 2, 2, null, { top: 0.8 }), [0.125, 0.25, 0.5, 0.0625], 1e-7, 'shared top');
  });

  it('parses names (case, spaces) and refuses others with a RangeError naming color-scale', () => {
    assert.equal(parseColorScale(' LOG '), 'log');
    for (const bad of ['cubic', '', 3, null, undefined])
      assert.throws(() => parseColorScale(bad), (e) => e instanceof RangeError && /^color-scale must be one of linear, sqrt, log, row, max/.test(e.message));
  });

  it('legend ticks sit where the mapping puts their weights', () => {
    for (const kind of ['linear', 'sqrt', 'log', 'max']) {
      const ticks = legendTicks(kind, 0.3);
      assert.ok(ticks.length >= 3, kind);
      for (const t of ticks.slice(kind === 'log' ? 1 : 0)) {
        const w = Number(t.label);
        close([t.t], reference(kind, [w], 1, 1, null, kind === 'max' ? 0.3 : null), 1e-9, `${kind} tick ${t.label}`);
      }
    }
    assert.equal(legendTicks('log')[0].label, '≤0.001');
    assert.deepEqual(legendTicks('row').map((t) => t.label), ['0', '½', 'row max']);
  });
});

describe('color-scale in the SVG exports', () => {
  const theme = themeFor('light');
  const tokens = ['The', ' cat', ' sat', ' on', ' the', ' mat'];
  const n = tokens.length;
  const json = { tokens, attention: ref.randomAttention(2, 2, n, 11, 3) };
  const result = resultFor(json, 'causal');
  const w0 = result.weights[0].subarray(0, n * n);
  const causal = Uint8Array.from({ length: n * n }, (_, c) => (c % n > Math.floor(c / n) ? 1 : 0));
  const cellFills = (svg) => [...svg.matchAll(/<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="([^"]+)" data-weight="([^"]+)"/g)]
    .map((m) => ({ fill: m[1], weight: m[2] }));

  for (const kind of COLOR_SCALES) {
    it(`heatmap ${kind}: each cell's fill is the mapping of its weight; data-weight stays the weight`, () => {
      const cells = cellFills(heatmapSVG(result, theme, { 'color-scale': kind }));
      assert.equal(cells.length, n * n);
      const want = reference(kind, w0, n, n, causal);
      cells.forEach((c, k) => {
        if (c.weight === 'masked') return assert.equal(causal[k], 1);
        assert.ok(Math.abs(Number(c.weight) - w0[k]) <= 0.005, `weight ${k}`);
        assert.ok(Math.abs(along(theme, rgbOf(c.fill)) - want[k]) <= STEP, `${kind} cell ${k}: ${along(theme, rgbOf(c.fill))} vs ${want[k]}`);
      });
    });
  }

  it('a large heatmap (embedded image) and the heads thumbnails: pixels are the sqrt mapping', () => {
    const big = 90, data = { tokens: Array.from({ length: big }, (_, i) => `t${i}`), attention: ref.randomAttention(1, 2, big, 4, 3) };
    const r = resultFor(data);
    const [cells] = images(heatmapSVG(r, theme, { 'color-scale': 'sqrt' }));
    const zoom = cells.width / big, w = r.weights[0];
    const want = reference('sqrt', w.subarray(0, big * big), big, big);
    let worst = 0;
    for (let i = 0; i < big; i++)
      for (let j = 0; j < big; j++) {
        const at = ((i * zoom + (zoom >> 1)) * cells.width + j * zoom + (zoom >> 1)) * 4;
        worst = Math.max(worst, Math.abs(along(theme, [...cells.data.subarray(at, at + 3)]) - want[i * big + j]));
      }
    assert.ok(worst <= 0.5 / 255 + STEP, `heatmap image read-back error ${worst}`);  // 256 levels
    const thumbs = images(headsSVG(r, theme, { 'color-scale': 'row' }));
    const head1 = reference('row', w.subarray(big * big, 2 * big * big), big, big);
    const t = thumbs[1], scale = t.width / big;  // 144 px for 90 cells: a cell is 1.6 px
    const at = (i, j) => ((Math.floor((i + 0.5) * scale) * t.width + Math.floor((j + 0.5) * scale)) * 4);
    // Each row's largest weight is the top colour.
    for (let i = 0; i < big; i += 17) {
      const row = head1.slice(i * big, (i + 1) * big), j = row.indexOf(1);
      assert.ok(Math.abs(along(theme, [...t.data.subarray(at(i, j), at(i, j) + 3)]) - 1) <= 0.02, `row ${i}`);
    }
  });

  it('lines: the focused query\'s boxes are as opaque as the mapped weights', () => {
    const svg = linesSVG(result, theme, { layer: 0, heads: [0], query: 3, 'color-scale': 'max' });
    const boxes = [...svg.matchAll(/fill-opacity="([^"]+)" data-box-head="0" data-box-key="(\d+)" data-weight="([^"]+)"/g)];
    assert.ok(boxes.length >= 3);
    const want = reference('max', w0, n, n, causal);
    for (const [, opacity, key, weight] of boxes) {
      assert.ok(Math.abs(Number(weight) - w0[3 * n + Number(key)]) <= 1e-6);
      assert.ok(Math.abs(Number(opacity) - want[3 * n + Number(key)]) <= 0.005, `box ${key}: ${opacity}`);
    }
  });

  it('compare with max: both panels on one top (the larger of A and B)', () => {
    const two = { a: result, b: resultFor({ tokens, attention: ref.randomAttention(1, 1, n, 7, 3) }, 'causal') };
    const sides = { a: { layer: 0, head: 0, label: 'A' }, b: { layer: 0, head: 0, label: 'B' } };
    const svg = compareSVG(two, theme, { view: 'side-by-side', sides, 'color-scale': 'max' });
    const fills = [...svg.matchAll(/fill="(rgb\([^"]+\)|#[0-9a-f]{6})" data-panel="[ab]" data-row="\d+" data-column="\d+" data-value="([^"]+)"/g)];
    assert.equal(fills.length, 2 * n * n - 2 * causal.reduce((a, b) => a + b, 0));
    const top = Math.max(...w0, ...two.b.weights[0].subarray(0, n * n));
    for (const [, fill, value] of fills)
      assert.ok(Math.abs(along(theme, rgbOf(fill)) - Number(value) / top) <= STEP + 0.005 / top, `${value} → ${fill}`);
  });

  it('generate: the text tints are the mapping of where the new token looked', () => {
    const looked = new Float32Array([0.6, 0.02, 0.3, 0.08]);
    const frame = { labels: ['Once', ' upon', ' a', ' time', ' there'], shown: 5, newest: 4, looked, candidates: [], chosen: 0,
      current: 0, steps: 4, promptLength: 4, size: 0, filledRows: 0, model: 'm', where: 'layer 1', colorScale: 'row' };
    const fills = [...generateSVG(frame, theme).matchAll(/rx="3" fill="([^"]+)" data-weight="([^"]+)"/g)];
    assert.equal(fills.length, 4);
    const want = reference('row', looked, 1, 4);
    fills.forEach(([, fill], j) => assert.ok(Math.abs(along(theme, rgbOf(fill)) - want[j]) <= STEP, `token ${j}`));
  });

  it('the CLI: --color-scale (and colorScale) give the element\'s SVG; a bad one is an OptionError naming it', async () => {
    const svg = await render(json, { figure: 'heatmap', 'color-scale': 'log', mask: 'causal' });
    assert.equal(svg, heatmapSVG(result, theme, { query: -1, 'color-scale': 'log', weights: w0 }));
    assert.equal(await render(json, { figure: 'heatmap', colorScale: 'log', mask: 'causal' }), svg);
    await assert.rejects(render(json, { 'color-scale': 'loud' }), (e) => e.name === 'OptionError' && /--color-scale: color-scale must be one of/.test(e.message));
    const pipeline = await render({ tokens: ['a', 'b', 'c'], Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0], [0, 1], [1, 1]] }, { figure: 'pipeline', 'color-scale': 'row' });
    assert.ok(pipeline.includes('<svg'));
  });
});
