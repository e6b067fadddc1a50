// Shared by the figure tests: test data, the float64 reference in the shapes the figures use,
// and page-side helpers that read back what a figure drew.
import assert from 'node:assert/strict';

import { PNG } from 'pngjs';

import * as ref from '../../js/reference.js';

export { ref };

export const SENTENCE = ['The', 'cat', 'sat', 'on', 'the', 'mat', 'because', 'it', 'was', 'tired', '.'];

/** Nested [rows][cols] from a flat Float32Array (what authors write in JSON). */
export function nested(flat, rows, cols) {
  return Array.from({ length: rows }, (_, i) => Array.from(flat.subarray(i * cols, (i + 1) * cols)));
}

/** Seeded Q, K, V for `tokens` (one head), as flat arrays and as the JSON an author gives. */
export function vectors(tokens, { dK = 4, dV = dK, seed = 1, spread = 1 } = {}) {
  const n = tokens.length;
  const q = ref.uniform(n * dK, seed, -spread, spread), k = ref.uniform(n * dK, seed + 1, -spread, spread);
  const v = ref.uniform(n * dV, seed + 2);
  return { n, dK, dV, q, k, v, json: { tokens, Q: nested(q, n, dK), K: nested(k, n, dK), V: nested(v, n, dV) } };
}

/** Row `i` of the float64 reference weights for the data, with attention options. */
export function referenceRow(data, i, options = {}) {
  const { weights } = ref.attention(data.q, data.k, data.v, { dK: data.dK, dV: data.dV, ...options });
  return Array.from(weights.subarray(i * data.n, (i + 1) * data.n));
}

export function assertClose(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++)
    assert.ok(Math.abs(got[i] - want[i]) <= tolerance, `${what}[${i}]: got ${got[i]}, want ${want[i]} (±${tolerance})`);
}

/** Sets `data` on the element with this id and waits until it is drawn; returns whether it is fine. */
export function setData(page, id, data) {
  return page.evaluate(async ([id, data]) => {
    const el = document.getElementById(id);
    el.data = data;
    return el.updateComplete;
  }, [id, data]);
}

/** Waits for the element to be defined and drawn. */
export function ready(page, id) {
  return page.evaluate(async (id) => {
    await customElements.whenDefined(document.getElementById(id).localName);
    return document.getElementById(id).updateComplete;
  }, id);
}

/**
 * Reads an <attn-heatmap>'s canvas at every cell centre and turns the colour back into a weight
 * with the theme's two colours (--attn-low → --attn-high, linear), independently of the element's
 * own colour code. Cells whose pixel is far from that line (hatched masks) come back as null.
 */
export function readHeatmap(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id);
    const canvas = el.shadowRoot.querySelector('canvas.cells');
    const { gutter, cell, n } = el.layout;
    const nQ = el.layout.nQ ?? n, nK = el.layout.nK ?? n;  // cross-attention: nQ rows × nK columns
    // Under zoom only a window is drawn: its cells are `cells`; `values` stays the unzoomed table.
    const v = el.view ?? { zoom: 1, row: 0, col: 0, rows: nQ, cols: nK };
    const s = cell * v.zoom, ratio = canvas.width / (gutter + cell * nK);
    const style = getComputedStyle(el);
    const rgb = (name) => {
      const hex = style.getPropertyValue(name).trim().slice(1);
      return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16));
    };
    const low = rgb('--attn-low'), high = rgb('--attn-high');
    // Read a copy: repeated reads of the figure's own canvas would make Chrome warn.
    const copy = document.createElement('canvas');
    copy.width = canvas.width;
    copy.height = canvas.height;
    const ctx = copy.getContext('2d', { willReadFrequently: true });
    ctx.drawImage(canvas, 0, 0);
    const image = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const values = [], cells = [];
    // Whole cells inside the window, row by row.
    for (let i = Math.ceil(v.row); i + 1 <= v.row + v.rows + 1e-9; i++)
      for (let j = Math.ceil(v.col); j + 1 <= v.col + v.cols + 1e-9; j++) {
        const x = Math.floor((gutter + (j - v.col + 0.5) * s) * ratio), y = Math.floor((gutter + (i - v.row + 0.5) * s) * ratio);
        const at = (y * canvas.width + x) * 4;
        const px = [image[at], image[at + 1], image[at + 2]];
        // Project the pixel on the low→high line; off the line means it is not a weight colour.
        const d = high.map((h, c) => h - low[c]);
        const t = d.reduce((a, dc, c) => a + dc * (px[c] - low[c]), 0) / d.reduce((a, dc) => a + dc * dc, 0);
        const off = Math.max(...px.map((p, c) => Math.abs(p - (low[c] + t * d[c]))));
        const value = off > 3 ? null : t;
        cells.push({ i, j, value });
        if (v.zoom === 1) values.push(value);
      }
    return { n, nQ, nK, values, cells };
  }, id);
}

/**
 * Figure `id`'s toSVG() and toPNG({ pixelRatio: ratio }), the PNG decoded here with pngjs:
 * { svg (the string), png ({ width, height, data: RGBA bytes }) }.
 */
export async function exportPNG(page, id, { ratio = 2 } = {}) {
  const r = await page.evaluate(async ([id, ratio]) => {
    const el = document.getElementById(id);
    const blob = await el.toPNG({ pixelRatio: ratio });
    const bytes = new Uint8Array(await blob.arrayBuffer());
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { type: blob.type, base64: btoa(binary), svg: el.toSVG() };
  }, [id, ratio]);
  assert.equal(r.type, 'image/png');
  return { svg: r.svg, png: PNG.sync.read(Buffer.from(r.base64, 'base64')) };
}

/** The RGB of pixel (x, y) of a decoded PNG. */
export const pixel = (png, x, y) => [0, 1, 2].map((c) => png.data[(y * png.width + x) * 4 + c]);

/**
 * Exports figure `id` as PNG (exportPNG) and reads, for every <rect data-weight> of its SVG (the
 * same drawing), one pixel inside it: at the rect's horizontal centre and `at` of its height
 * (0.5: the middle; 'bottom': the last pixel row inside, below any text drawn on it). Each pixel
 * is turned back into a position on the theme's low → high ramp (linear, from the element's
 * --attn-low / --attn-high), independently of the figure's colour code; with `opacity`, into the
 * opacity of the rect's own fill over --attn-bg (the lines' weight boxes); `left`: sample one SVG
 * unit inside the rect's left edge instead of its centre (clear of a label drawn on it). Returns
 * { width, height, svgWidth, svgHeight, cells: [{ weight, value, off }] } (off: how far in 8-bit
 * units the pixel is from the ramp).
 */
export async function readPNG(page, id, { ratio = 2, at = 0.5, left = false, opacity = false } = {}) {
  const { svg, png } = await exportPNG(page, id, { ratio });
  const r = await page.evaluate(([id, text]) => {
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    const style = getComputedStyle(document.getElementById(id));
    return {
      low: style.getPropertyValue('--attn-low').trim(), high: style.getPropertyValue('--attn-high').trim(),
      bg: style.getPropertyValue('--attn-bg').trim(),
      svgWidth: Number(svg.getAttribute('width')), svgHeight: Number(svg.getAttribute('height')), viewWidth: svg.viewBox.baseVal.width,
      rects: [...svg.querySelectorAll('rect[data-weight]')].filter((e) => e.getAttribute('data-weight') !== 'masked')
        .map((e) => [...['x', 'y', 'width', 'height', 'data-weight'].map((a) => Number(e.getAttribute(a))), e.getAttribute('fill')]),
    };
  }, [id, svg]);
  const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const k = png.width / r.viewWidth;  // PNG pixels per SVG user unit
  const cells = r.rects.map(([x, y, w, h, weight, fill]) => {
    const low = rgb(opacity ? r.bg : r.low), high = rgb(opacity ? fill : r.high), d = high.map((v, c) => v - low[c]);
    const py = Math.floor((at === 'bottom' ? y + h - 1 : y + h * at) * k);
    const p = pixel(png, Math.floor((left ? x + 1 : x + w / 2) * k), py);
    const value = d.reduce((a, dc, c) => a + dc * (p[c] - low[c]), 0) / d.reduce((a, dc) => a + dc * dc, 0);
    const off = Math.max(...p.map((v, c) => Math.abs(v - (low[c] + value * d[c]))));
    return { weight, value, off };
  });
  return { width: png.width, height: png.height, svgWidth: r.svgWidth, svgHeight: r.svgHeight, cells };
}

/** Parses an SVG string in the page; returns { ok, texts, rects } or the parser's error. */
export function parseSVG(page, svg) {
  return page.evaluate((svg) => {
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const error = doc.querySelector('parsererror');
    if (error) return { ok: false, error: error.textContent };
    return {
      ok: doc.documentElement.localName === 'svg',
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
      title: doc.querySelector('title')?.textContent ?? '',
      rects: doc.querySelectorAll('rect').length,
      scripts: doc.querySelectorAll('script, foreignObject').length,
    };
  }, svg);
}

/** Collects `change` events of the element into window.__changes. */
export function recordChanges(page, id) {
  return page.evaluate((id) => {
    window.__changes = [];
    document.getElementById(id).addEventListener('change', (e) => window.__changes.push(e.detail));
  }, id);
}

export const changes = (page) => page.evaluate(() => window.__changes.map(({ name, value, user }) => ({ name, value, user })));

export function assertClean(page, browser) {
  assert.deepEqual(page.problems, [], 'console errors or failed requests');
  assert.deepEqual(browser.offHost, [], 'requests that left 127.0.0.1');
}

// <attn-lines> at 4096 tokens (lines-long and touch tests).
export const LONG_N = 4096;
// Row i: weights 0.5, 0.3, 0.2 on keys i, (7i + 3) mod n, (13i + 5) mod n (they may coincide);
// the page builds the matrix with the same rule.
export const longRowKeys = (i, n = LONG_N) => new Set([i, (i * 7 + 3) % n, (i * 13 + 5) % n]);
export const longTokenText = (i) => (i === 2003 ? '<b>x</b>' : `t${i}`);

/** Sets 4096-token data (tokens t0…, token 2003 written as HTML) on the element `id`. */
export function setLongData(page, id) {
  return page.evaluate(async ([id, n]) => {
    const el = document.getElementById(id);
    const w = new Float32Array(n * n);
    for (let i = 0; i < n; i++) for (const [j, x] of [[i, 0.5], [(i * 7 + 3) % n, 0.3], [(i * 13 + 5) % n, 0.2]]) w[i * n + j] += x;
    el.data = { tokens: Array.from({ length: n }, (_, i) => (i === 2003 ? '<b>x</b>' : `t${i}`)), attention: w };
    return el.updateComplete;
  }, [id, LONG_N]);
}

// Where token i's row is on screen (client coordinates), in the query (left) or key column.
export const rowPoint = (page, id, i, side = 'query') => page.evaluate(([id, i, side]) => {
  const el = document.getElementById(id), l = el.layout;
  const rect = el.shadowRoot.querySelector('canvas').getBoundingClientRect(), s = rect.width / l.width;
  return { x: rect.left + (side === 'query' ? l.x0 / 2 : (l.x1 + l.width) / 2) * s, y: rect.top + (l.top + (i + 0.5) * l.row) * s };
}, [id, i, side]);


/** [heads·count] → the element-wise mean or max over the heads, float64. */
export function headReduce(flat, heads, count, mode) {
  const out = new Float64Array(count).fill(mode === 'max' ? -Infinity : 0);
  for (let h = 0; h < heads; h++)
    for (let c = 0; c < count; c++) {
      const x = flat[h * count + c];
      out[c] = mode === 'max' ? Math.max(out[c], x) : out[c] + x / heads;
    }
  return out;
}

// Abnar & Zuidema: Â = rownorm(0.5·mean_h(A) + 0.5·I), R = Â_L·…·Â_1.
export function rollout(layers, heads, n) {
  let r = null;
  for (const layer of layers) {
    const a = headReduce(layer, heads, n * n, 'mean');
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let j = 0; j < n; j++) sum += (a[i * n + j] = 0.5 * a[i * n + j] + (i === j ? 0.5 : 0));
      for (let j = 0; j < n; j++) a[i * n + j] /= sum;
    }
    if (!r) { r = a; continue; }
    const next = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let k = 0; k < n; k++)
        for (let j = 0; j < n; j++) next[i * n + j] += a[i * n + k] * r[k * n + j];
    r = next;
  }
  return r;
}
