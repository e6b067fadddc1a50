// Drawing an n×n weight matrix fast: every cell is one pixel of an n×n image (filled through a
// colour look-up table into ImageData), scaled onto the visible canvas with drawImage; masked
// cells are covered with a hatch pattern, so a mask never looks like a small weight. A figure
// that redraws often keeps a PixelMatrix (and a MatrixLayers) so a redraw allocates nothing of
// size n²: a fresh n×n ImageData and canvas per redraw cost milliseconds at n = 512.
import { css } from './color.js';
import { maskMatrix } from './compute.js';

const scratch = () => document.createElement('canvas');

/** An n×n canvas with its ImageData and a packed-RGBA Uint32 view, kept while n stays. */
export class PixelMatrix {
  #canvas = null;
  #ctx = null;
  #image = null;
  #pixels = null;

  /** Lets `fill(pixels)` write every pixel (one Uint32 per cell), puts them; returns the canvas. */
  paint(n, fill) {
    if (this.#canvas?.width !== n) {
      this.#canvas = scratch();
      this.#canvas.width = n;
      this.#canvas.height = n;
      this.#ctx = this.#canvas.getContext('2d');
      this.#image = this.#ctx.createImageData(n, n);
      this.#pixels = new Uint32Array(this.#image.data.buffer);
    }
    fill(this.#pixels);
    this.#ctx.putImageData(this.#image, 0, 0);
    return this.#canvas;
  }
}

/** An n×n canvas whose pixels `fill(pixels)` writes, used once. */
const pixelCanvas = (n, fill) => new PixelMatrix().paint(n, fill);

/**
 * The matrix as an n×n canvas: one pixel per cell, colour from `scale` (see color.js) through
 * its look-up table. Pass a PixelMatrix to reuse its canvas (the result is then that canvas).
 */
export function cellsLayer(weights, n, scale, masked, into = null) {
  const fill = (pixels) => {
    const lut = scale.lut, top = lut.length - 1, nn = n * n;
    for (let c = 0; c < nn; c++) {
      const w = weights[c];
      // = lut[round(clamp01(w)·top)]; NaN lands on 0.
      pixels[c] = lut[w >= 1 ? top : w > 0 ? (w * top + 0.5) | 0 : 0];
    }
    if (masked) for (let c = 0; c < nn; c++) if (masked[c]) pixels[c] = lut[0];
  };
  return into ? into.paint(n, fill) : pixelCanvas(n, fill);
}

/** Masked cells as an n×n alpha image (opaque where masked), or null; into a PixelMatrix if given. */
export function maskLayer(masked, n, into = null) {
  if (!masked) return null;
  const fill = (pixels) => {
    for (let c = 0; c < n * n; c++) pixels[c] = masked[c] ? -16777216 : 0;  // 0xff000000 as int32: a fast store
  };
  return into ? into.paint(n, fill) : pixelCanvas(n, fill);
}

/**
 * What one figure keeps between redraws: the cells' pixel canvas, the masked cells and their
 * layer (rebuilt only when the masks change), the hatched mask drawn at its last size and theme.
 */
export class MatrixLayers {
  #cells = new PixelMatrix();
  #maskPixels = new PixelMatrix();
  #maskKey = null;
  #masks = { masked: null, layer: null };
  /** drawMatrix's cache of the hatched mask (see there). */
  hatch = {};

  /** { masked: Uint8Array n×n | null, layer: canvas | null } for compute.js's `masks`. */
  masks(masks, n) {
    const key = maskKey(masks, n);
    if (key !== this.#maskKey) {
      const masked = maskMatrix(masks, n);
      this.#masks = { masked, layer: maskLayer(masked, n, this.#maskPixels) };
      this.#maskKey = key;
      this.hatch.stale = true;  // same canvas, new content
    }
    return this.#masks;
  }

  /** The weights as this figure's reused n×n pixel canvas. */
  cells(weights, n, scale, masked) {
    return cellsLayer(weights, n, scale, masked, this.#cells);
  }
}

// Equal keys mean equal masked cells.
function maskKey(masks, n) {
  return `${n}|${masks.causal ? 'c' : ''}|${masks.keyMask ? masks.keyMask.join('') : ''}`;
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
 * Draws the cells (and hatched masks) into ctx at (x, y), `size` CSS pixels square. Small
 * matrices stay crisp (nearest neighbour); big ones are smoothed when shrunk. With `cache` (an
 * object the figure keeps, e.g. MatrixLayers#hatch), the hatched mask is drawn again only when
 * the mask layer, its size or the theme changed.
 */
export function drawMatrix(ctx, { cells, mask, x, y, size, theme, ratio = 1, cache = null }) {
  const n = cells.width;
  ctx.save();
  ctx.imageSmoothingEnabled = n > size * ratio;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(cells, x, y, size, size);
  if (mask) ctx.drawImage(hatchedMask(mask, Math.ceil(size * ratio), theme, ratio, cache), x, y, size, size);
  ctx.restore();
}

// Hatch everywhere on a w×w canvas, kept only where the mask is opaque. The cache keeps the
// all-hatched sheet (per size and theme) and the last result (per mask too; `stale` when the
// mask canvas was repainted).
function hatchedMask(mask, w, theme, ratio, cache) {
  const c = cache ?? {};
  const sameLook = c.w === w && c.theme === theme && c.ratio === ratio;
  if (c.layer && sameLook && c.mask === mask && !c.stale) return c.layer;
  if (!c.sheet || !sameLook) {
    const sheet = (c.sheet ??= scratch());
    sheet.width = w;
    sheet.height = w;
    const s = sheet.getContext('2d');
    s.fillStyle = hatch(s, theme, ratio);
    s.fillRect(0, 0, w, w);
  }
  const layer = (c.layer ??= scratch());
  layer.width = w;  // also clears it
  layer.height = w;
  const l = layer.getContext('2d');
  l.drawImage(c.sheet, 0, 0);
  l.globalCompositeOperation = 'destination-in';
  l.imageSmoothingEnabled = false;
  l.drawImage(mask, 0, 0, w, w);
  Object.assign(c, { mask, w, theme, ratio, stale: false });
  return layer;
}
