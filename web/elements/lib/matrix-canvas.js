// Drawing an nQ×nK weight matrix fast: every cell is one pixel of an image (filled through a
// colour look-up table into ImageData), scaled onto the visible canvas with drawImage; masked
// cells are covered with a hatch pattern, so a mask never looks like a small weight. A figure
// that redraws often keeps a MatrixLayers (PixelMatrix canvases and a hatch cache), so a redraw
// allocates nothing of size n²: a fresh n×n ImageData and canvas per redraw cost milliseconds at
// n = 512.
import { css } from './color.js';
import { maskMatrix } from './compute.js';

const scratch = () => document.createElement('canvas');

/** A cols×rows canvas with its ImageData and a packed-RGBA Uint32 view, kept while the size stays. */
export class PixelMatrix {
  #canvas = null;
  #ctx = null;
  #image = null;
  #pixels = null;

  /** Lets `fill(pixels)` write every pixel (one Uint32 per cell), puts them; returns the canvas. */
  paint(rows, cols, fill) {
    if (this.#canvas?.width !== cols || this.#canvas.height !== rows) {
      this.#canvas = scratch();
      this.#canvas.width = cols;
      this.#canvas.height = rows;
      this.#ctx = this.#canvas.getContext('2d');
      this.#image = this.#ctx.createImageData(cols, rows);
      this.#pixels = new Uint32Array(this.#image.data.buffer);
    }
    fill(this.#pixels);
    this.#ctx.putImageData(this.#image, 0, 0);
    return this.#canvas;
  }
}

/** A cols×rows canvas whose pixels `fill(pixels)` writes, used once. */
const pixelCanvas = (rows, fill, cols = rows) => new PixelMatrix().paint(rows, cols, fill);

/**
 * The n×nK matrix as a canvas: one pixel per cell, colour from `scale` (see color.js) through
 * its look-up table. With a PixelMatrix `into`, its canvas is reused (and returned).
 */
export function cellsLayer(weights, n, scale, masked, nK = n, into = null) {
  const count = n * nK;
  const fill = (pixels) => {
    const lut = scale.lut;
    if (lut) {  // the scale's table inlined: = lut[round(clamp01(w)·top)] = scale.packed(w); NaN → 0
      const top = lut.length - 1;
      for (let c = 0; c < count; c++) {
        const w = weights[c];
        pixels[c] = lut[w >= 1 ? top : w > 0 ? (w * top + 0.5) | 0 : 0];
      }
    } else {  // a scale with only packed(w) (e.g. the difference view's)
      for (let c = 0; c < count; c++) pixels[c] = scale.packed(weights[c]);
    }
    if (masked) {
      const zero = scale.packed(0);  // once, not per masked cell (a call each while code is cold)
      for (let c = 0; c < count; c++) if (masked[c]) pixels[c] = zero;
    }
  };
  return into ? into.paint(n, nK, fill) : pixelCanvas(n, fill, nK);
}

/** Masked cells as an n×nK alpha image (opaque where masked), or null; into a PixelMatrix if given. */
export function maskLayer(masked, n, nK = n, into = null) {
  if (!masked) return null;
  const count = n * nK;
  const fill = (pixels) => {
    for (let c = 0; c < count; c++) pixels[c] = masked[c] ? -16777216 : 0;  // 0xff000000 as int32: a fast store
  };
  return into ? into.paint(n, nK, fill) : pixelCanvas(n, fill, nK);
}

/**
 * What one figure keeps between redraws: the cells' pixel canvas, the masked cells and their
 * layer (rebuilt only when the masks change), and drawMatrix's hatch cache.
 */
export class MatrixLayers {
  #cells = new PixelMatrix();
  #maskPixels = new PixelMatrix();
  #maskKey = null;
  #masks = { masked: null, layer: null };
  /** drawMatrix's `cache` for the hatched mask (see there). */
  hatch = {};

  /** { masked: Uint8Array nQ×nK | null, layer: canvas | null } for compute.js's `masks`. */
  masks(masks, nQ, nK = nQ) {
    const positions = masks.keyPositions ? `${masks.queryPositions.join(',')}/${masks.keyPositions.join(',')}` : '';
    const key = `${nQ}×${nK}|${masks.causal ? 'c' : ''}|${masks.keyMask ? masks.keyMask.join('') : ''}|${positions}`;
    if (key !== this.#maskKey) {
      const masked = maskMatrix(masks, nQ, nK);
      this.#masks = { masked, layer: maskLayer(masked, nQ, nK, this.#maskPixels) };
      this.#maskKey = key;
      this.hatch.stale = true;  // same canvas, new content
    }
    return this.#masks;
  }

  /** The weights as this figure's reused pixel canvas. */
  cells(weights, n, scale, masked, nK = n) {
    return cellsLayer(weights, n, scale, masked, nK, this.#cells);
  }
}

/** A diagonal hatch (the theme's mask colours) as a canvas pattern. */
export function hatch(ctx, theme, ratio = 1) {
  const tile = scratch();
  const s = Math.max(4, Math.round(6 * ratio));
  tile.width = s;
  tile.height = s;
  const t = tile.getContext('2d');
  t.fillStyle = css(theme.maskBg);
  t.fillRect(0, 0, s, s);
  t.strokeStyle = css(theme.maskLine);
  t.lineWidth = Math.max(1, ratio);
  t.beginPath();
  for (const o of [-s, 0, s]) {
    t.moveTo(o, s);
    t.lineTo(o + s, 0);
  }
  t.stroke();
  return ctx.createPattern(tile, 'repeat');
}

/**
 * Draws the cells (and hatched masks) into ctx at (x, y), `size` CSS pixels square (or `width` ×
 * `height`). `source` = { x, y, width, height } in cells draws only that window (zoom). Small
 * matrices stay crisp (nearest neighbour); big ones are smoothed when shrunk. With `cache` (an
 * object the figure keeps, e.g. MatrixLayers#hatch), the hatched mask is composed again only
 * when the mask, the window, the size or the theme changed.
 */
export function drawMatrix(ctx, { cells, mask, x, y, size, width = size, height = size, source = null, theme, ratio = 1, cache = null }) {
  const src = source ?? { x: 0, y: 0, width: cells.width, height: cells.height };
  ctx.save();
  ctx.imageSmoothingEnabled = src.width > width * ratio;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(cells, src.x, src.y, src.width, src.height, x, y, width, height);
  if (mask) {
    const w = Math.ceil(width * ratio), h = Math.ceil(height * ratio);
    ctx.drawImage(hatchedMask(mask, src, w, h, theme, ratio, cache ?? {}), x, y, width, height);
  }
  ctx.restore();
}

// Hatch everywhere on a w×h canvas, kept only where the mask (window `src`) is opaque. The cache
// keeps the all-hatched sheet (per size and theme) and the last result; `stale` is set when the
// mask canvas was repainted in place.
function hatchedMask(mask, src, w, h, theme, ratio, c) {
  const look = `${w}×${h}@${ratio}`, window = `${src.x},${src.y},${src.width},${src.height}`;
  const sameLook = c.look === look && c.theme === theme;
  if (c.layer && sameLook && c.mask === mask && c.window === window && !c.stale) return c.layer;
  if (!c.sheet || !sameLook) {
    const sheet = (c.sheet ??= scratch());
    sheet.width = w;
    sheet.height = h;
    const s = sheet.getContext('2d');
    s.fillStyle = hatch(s, theme, ratio);
    s.fillRect(0, 0, w, h);
  }
  const layer = (c.layer ??= scratch());
  layer.width = w;  // also clears it
  layer.height = h;
  const l = layer.getContext('2d');
  l.drawImage(c.sheet, 0, 0);
  l.globalCompositeOperation = 'destination-in';
  l.imageSmoothingEnabled = false;
  l.drawImage(mask, src.x, src.y, src.width, src.height, 0, 0, w, h);
  Object.assign(c, { mask, window, look, theme, stale: false });
  return layer;
}
