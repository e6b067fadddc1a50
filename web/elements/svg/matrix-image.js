// A weight matrix as SVG <image>s without a canvas: one palette PNG of the cells (256 levels of
// the theme's scale, enlarged by a whole factor so cells stay sharp, or averaged in blocks when
// larger than `maxPixels`) and, where cells are masked, the theme's hatch shown through a mask.
import { pngDataURL } from '../lib/png.js';
import { tag } from '../lib/export.js';

const LEVELS = 256;

/** The image size and per-cell mapping: each output pixel covers `block` cells or a cell covers `zoom` pixels. */
function geometry(rows, cols, target, maxPixels) {
  const block = Math.max(1, Math.ceil(Math.max(rows, cols) / maxPixels));
  const zoom = block > 1 ? 1 : Math.max(1, Math.floor(Math.min(target, maxPixels) / Math.max(rows, cols)));
  return { block, zoom, width: Math.ceil(cols / block) * zoom, height: Math.ceil(rows / block) * zoom };
}

/** Per output pixel of a block-averaged / enlarged image: fill(index of each pixel). */
function pixels(rows, cols, { block, zoom, width, height }, value) {
  const small = new Float64Array(Math.ceil(rows / block) * Math.ceil(cols / block));
  const count = new Uint32Array(small.length);
  const sw = Math.ceil(cols / block);
  for (let i = 0; i < rows; i++)
    for (let j = 0; j < cols; j++) {
      const s = Math.floor(i / block) * sw + Math.floor(j / block);
      small[s] += value(i * cols + j);
      count[s]++;
    }
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const sy = Math.floor(y / zoom) * sw;
    for (let x = 0; x < width; x++) {
      const s = sy + Math.floor(x / zoom);
      out[y * width + x] = Math.round(small[s] / count[s]);
    }
  }
  return out;
}

const clampLevel = (w) => (w > 0 ? (w < 1 ? w * (LEVELS - 1) : LEVELS - 1) : 0);

/**
 * SVG markup drawing `weights` (rows×cols, rows = queries) in the box (x, y, width, height):
 * `masked` (Uint8Array, 1 = masked, or null) cells show `hatchId`'s pattern. `target` is the
 * wanted pixel size of the longer side; ids are made unique with `id`.
 */
export function matrixImageSVG({ weights, rows, cols, masked, scale, x, y, width, height, target, maxPixels = 2048, hatchId = 'attn-hatch', id = 'attn-cells' }) {
  const g = geometry(rows, cols, target, maxPixels);
  const palette = new Uint8Array(LEVELS * 3);
  for (let i = 0; i < LEVELS; i++) palette.set(scale.rgb(i / (LEVELS - 1)), i * 3);
  const cells = pixels(rows, cols, g, (c) => (masked?.[c] ? 0 : clampLevel(weights[c])));
  const box = { x, y, width, height, preserveAspectRatio: 'none' };
  const parts = [tag('image', { ...box, href: pngDataURL({ width: g.width, height: g.height, indices: cells, palette }) })];
  if (masked) {
    const mask = pixels(rows, cols, g, (c) => masked[c]);  // the share of masked cells, rounded
    const href = pngDataURL({ width: g.width, height: g.height, indices: mask, palette: new Uint8Array([0, 0, 0, 255, 255, 255]) });
    parts.push(tag('mask', { id: `${id}-mask` }, tag('image', { ...box, href })),
      tag('rect', { x, y, width, height, fill: `url(#${hatchId})`, mask: `url(#${id}-mask)` }));
  }
  return parts.join('');
}
