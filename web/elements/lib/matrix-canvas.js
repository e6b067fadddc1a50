// Drawing an n×n weight matrix fast: every cell is one pixel of an n×n image (built once from
// ImageData), scaled onto the visible canvas with drawImage; masked cells are covered with a
// hatch pattern, so a mask never looks like a small weight.
import { css } from './color.js';

const scratch = () => document.createElement('canvas');

/** An n×n canvas whose pixels `fill(pixels)` writes (packed RGBA, one Uint32 per cell). */
function pixelCanvas(n, fill) {
  const canvas = scratch();
  canvas.width = n;
  canvas.height = n;
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(n, n);
  fill(new Uint32Array(image.data.buffer));
  ctx.putImageData(image, 0, 0);
  return canvas;
}

/** The matrix as an n×n canvas: one pixel per cell, colour from `scale` (see color.js). */
export function cellsLayer(weights, n, scale, masked) {
  return pixelCanvas(n, (pixels) => {
    for (let c = 0; c < n * n; c++) pixels[c] = scale.packed(weights[c]);
    if (masked) for (let c = 0; c < n * n; c++) if (masked[c]) pixels[c] = scale.packed(0);
  });
}

/** Masked cells as an n×n alpha image (opaque where masked), or null. */
export function maskLayer(masked, n) {
  if (!masked) return null;
  return pixelCanvas(n, (pixels) => {
    for (let c = 0; c < n * n; c++) if (masked[c]) pixels[c] = 0xff000000;
  });
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
 * matrices stay crisp (nearest neighbour); big ones are smoothed when shrunk.
 */
export function drawMatrix(ctx, { cells, mask, x, y, size, theme, ratio = 1 }) {
  const n = cells.width;
  ctx.save();
  ctx.imageSmoothingEnabled = n > size * ratio;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(cells, x, y, size, size);
  if (mask) {
    // Hatch everywhere on a scratch canvas, keep it only where the mask is opaque, draw on top.
    const w = Math.ceil(size * ratio);
    const layer = scratch();
    layer.width = w;
    layer.height = w;
    const l = layer.getContext('2d');
    l.fillStyle = hatch(l, theme, ratio);
    l.fillRect(0, 0, w, w);
    l.globalCompositeOperation = 'destination-in';
    l.imageSmoothingEnabled = false;
    l.drawImage(mask, 0, 0, w, w);
    ctx.drawImage(layer, x, y, size, size);
  }
  ctx.restore();
}
