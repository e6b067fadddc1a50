// Drawing an n×n weight matrix fast: every cell is one pixel of an n×n image (built once from
// ImageData), scaled onto the visible canvas with drawImage; masked cells are covered with a
// hatch pattern, so a mask never looks like a small weight.
import { css } from './color.js';

const scratch = () => document.createElement('canvas');

/** A cols×rows canvas whose pixels `fill(pixels)` writes (packed RGBA, one Uint32 per cell). */
function pixelCanvas(rows, fill, cols = rows) {
  const canvas = scratch();
  canvas.width = cols;
  canvas.height = rows;
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(cols, rows);
  fill(new Uint32Array(image.data.buffer));
  ctx.putImageData(image, 0, 0);
  return canvas;
}

/** The n×nK matrix as a canvas: one pixel per cell, colour from `scale` (see color.js). */
export function cellsLayer(weights, n, scale, masked, nK = n) {
  const count = n * nK;
  return pixelCanvas(n, (pixels) => {
    for (let c = 0; c < count; c++) pixels[c] = scale.packed(weights[c]);
    if (masked) for (let c = 0; c < count; c++) if (masked[c]) pixels[c] = scale.packed(0);
  }, nK);
}

/** Masked cells as an n×nK alpha image (opaque where masked), or null. */
export function maskLayer(masked, n, nK = n) {
  if (!masked) return null;
  const count = n * nK;
  return pixelCanvas(n, (pixels) => {
    for (let c = 0; c < count; c++) if (masked[c]) pixels[c] = 0xff000000;
  }, nK);
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
 * matrices stay crisp (nearest neighbour); big ones are smoothed when shrunk.
 */
export function drawMatrix(ctx, { cells, mask, x, y, size, width = size, height = size, source = null, theme, ratio = 1 }) {
  const src = source ?? { x: 0, y: 0, width: cells.width, height: cells.height };
  ctx.save();
  ctx.imageSmoothingEnabled = src.width > width * ratio;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(cells, src.x, src.y, src.width, src.height, x, y, width, height);
  if (mask) {
    // Hatch everywhere on a scratch canvas, keep it only where the mask is opaque, draw on top.
    const w = Math.ceil(width * ratio), h = Math.ceil(height * ratio);
    const layer = scratch();
    layer.width = w;
    layer.height = h;
    const l = layer.getContext('2d');
    l.fillStyle = hatch(l, theme, ratio);
    l.fillRect(0, 0, w, h);
    l.globalCompositeOperation = 'destination-in';
    l.imageSmoothingEnabled = false;
    l.drawImage(mask, src.x, src.y, src.width, src.height, 0, 0, w, h);
    ctx.drawImage(layer, x, y, width, height);
  }
  ctx.restore();
}
