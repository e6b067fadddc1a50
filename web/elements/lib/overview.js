// Colour positions of a weight table in blocks, for the heatmap at any length: the whole table
// downsampled (the overview) or a zoomed window at full resolution. A block takes its largest
// position, not the mean, so a thin band or a sink column stays visible in an 8192² table; it is
// masked only when all its cells are. Rows are read once, a causal row up to its last kept key.
import { colorPosition } from './color-scale.js';
import { causalEnd } from './compute.js';

/** The overview's longest side in blocks (2048 made the first draw at 8192 tokens 2× slower). */
export const OVERVIEW = 1024;

/** The largest kept weight of each row (for color-scale="row"). */
export function rowTops(weights, nQ, nK, masks) {
  const tops = new Float64Array(nQ), keep = masks.keyMask;
  for (let i = 0; i < nQ; i++)
    for (let j = 0, end = causalEnd(masks, i, nK); j < end; j++)
      if (weights[i * nK + j] > tops[i] && !(keep && keep[j] === 0)) tops[i] = weights[i * nK + j];
  return tops;
}

/**
 * Rows i0…i1−1 × columns j0…j1−1 of `weights` (rows of nK) in kQ×kK blocks as positions on
 * scale `kind`: { positions, masked (1 = all cells masked, or null), rows, cols, top }. `tops`:
 * { rows: rowTops for 'row', top: the largest kept weight for 'max' (found when not given) }.
 */
export function blockPositions(weights, nK, { i0 = 0, i1, j0 = 0, j1 = nK, kQ = 1, kK = 1 }, kind = 'linear', masks = {}, tops = {}) {
  const rows = Math.ceil((i1 - i0) / kQ), cols = Math.ceil((j1 - j0) / kK);
  const best = new Float32Array(rows * cols).fill(-1);  // −1: no kept cell
  for (let i = i0; i < i1; i++) {
    const end = Math.min(j1, causalEnd(masks, i, nK));
    if (end > j0) rowBlocks(weights, i * nK, j0, end, kK, masks.keyMask, kind === 'row' ? tops.rows[i] : -1, best, ((i - i0) / kQ | 0) * cols);
  }
  let top = tops.top ?? 0, masked = null;
  if (kind === 'max' && tops.top === undefined) for (const m of best) top = m > top ? m : top;
  for (let c = 0; c < best.length; c++) {
    if (best[c] < 0) (masked ??= new Uint8Array(best.length))[c] = 1;
    best[c] = kind === 'row' ? Math.max(0, best[c]) : colorPosition(kind, best[c], top);
  }
  return { positions: best, masked, rows, cols, top };
}

// One row into its blocks' maxima (alone and keyless, V8 runs the loop ~2× faster); with a row
// top ≥ 0, positions on the row scale (within a row every scale grows with the weight).
function rowBlocks(weights, row, j0, end, kK, keep, top, best, out) {
  for (let b = out, j = row + j0, e = row + end; j < e; b++) {
    let m = top < 0 && !keep ? best[b] : -1;
    if (keep) for (const stop = Math.min(e, j + kK); j < stop; j++) m = weights[j] > m && keep[j - row] ? weights[j] : m;
    else for (const stop = Math.min(e, j + kK); j < stop; j++) m = weights[j] > m ? weights[j] : m;
    if (top >= 0 && m >= 0) m = colorPosition('row', m, top);
    if (m > best[b]) best[b] = m;
  }
}
