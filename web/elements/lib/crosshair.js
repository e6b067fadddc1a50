// The crosshair of the matrix figures (heatmap, compare): a faint band along row i and column j
// of a plot at (x, y) with square cells, and a ring around the cell in the focus colour. `window`
// ({ x, y, width, height }, default the whole table) is the visible part of a zoomed plot: the
// bands stay inside it.
import { css } from './color.js';

export function drawCrosshair(ctx, { x, y, cell, rows, cols, i, j, theme, window }) {
  const w = window ?? { x, y, width: cell * cols, height: cell * rows };
  ctx.fillStyle = `rgba(${theme.fg.join(',')}, 0.10)`;
  ctx.fillRect(w.x, y + i * cell, w.width, Math.max(cell, 1));
  ctx.fillRect(x + j * cell, w.y, Math.max(cell, 1), w.height);
  const m = Math.max(cell, 6), left = x + (j + 0.5) * cell - m / 2, top = y + (i + 0.5) * cell - m / 2;
  ctx.lineWidth = 2;
  ctx.strokeStyle = css(theme.bg);
  ctx.strokeRect(left - 1, top - 1, m + 2, m + 2);
  ctx.strokeStyle = css(theme.focus);
  ctx.strokeRect(left, top, m, m);
}

const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], PageUp: [-10, 0], PageDown: [10, 0] };

/**
 * Where a key moves a cell cursor { i, j } in a rows × cols table (Home/End: first/last column,
 * with Ctrl or ⌘ the corners), or null when the key does not move it.
 */
export function gridMove(event, { i, j }, rows, cols) {
  const corner = event.ctrlKey || event.metaKey;
  if (event.key in MOVES) [i, j] = [i + MOVES[event.key][0], j + MOVES[event.key][1]];
  else if (event.key === 'Home') [i, j] = [corner ? 0 : i, 0];
  else if (event.key === 'End') [i, j] = [corner ? rows - 1 : i, cols - 1];
  else return null;
  return { i: Math.max(0, Math.min(rows - 1, i)), j: Math.max(0, Math.min(cols - 1, j)) };
}
