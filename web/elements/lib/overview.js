// Colour positions of a weight table in blocks, for the heatmap at any length: the whole table
// downsampled (the overview, at most OVERVIEW blocks a side, drawn at zoom 1 and in the
// minimap) and a window of it at full resolution (what a zoomed view shows). A block takes its
// largest position, not the mean: a thin band (a diagonal, a sink column) or one strong cell
// stays visible in an 8192² table, where a mean would fade it into the background. A block is
// masked (hatched) only when every one of its cells is. Each row is read once, a causal row only
// up to its last kept key: no n²-sized image, copy or mask is made.
import { colorPosition } from './color-scale.js';
import { causalEnd } from './compute.js';

/** The overview's longest side in blocks: a 1024² image (4 MB, where 8192² would be 256 MB;
 * 2048² made the first draw at 8192 tokens twice as slow). */
export const OVERVIEW = 1024;

const NO_MASKS = { causal: false, keyMask: null };

/** The largest kept weight of each row (for color-scale="row"): Float64Array of nQ. */
export function rowTops(weights, nQ, nK, masks) {
  const tops = new Float64Array(nQ), keep = masks.keyMask;
  for (let i = 0; i < nQ; i++) {
    let m = 0;
    for (let c = i * nK, j = 0, end = causalEnd(masks, i, nK); j < end; j++, c++)
      if (weights[c] > m && !(keep && keep[j] === 0)) m = weights[c];
    tops[i] = m;
  }
  return tops;
}

/**
 * Rows i0…i1−1 × columns j0…j1−1 of `weights` (rows of nK) in blocks of kQ×kK cells, as colour
 * positions on scale `kind` (color-scale.js): { positions: Float32Array, masked: Uint8Array
 * (1 = every cell masked) or null, rows, cols, top }. `tops`: { rows: rowTops (for 'row'),
 * top: the largest kept weight (for 'max'; found here when not given) }.
 */
export function blockPositions(weights, nK, { i0 = 0, i1, j0 = 0, j1 = nK, kQ = 1, kK = 1 }, kind = 'linear', masks = NO_MASKS, tops = {}) {
  const rows = Math.ceil((i1 - i0) / kQ), cols = Math.ceil((j1 - j0) / kK);
  const best = new Float32Array(rows * cols).fill(-1);  // −1: no kept cell (yet)
  const perRow = kind === 'row', keep = masks.keyMask;
  for (let i = i0; i < i1; i++) {
    const end = Math.min(j1, causalEnd(masks, i, nK));
    if (end > j0) rowBlocks(weights, i * nK, j0, end, kK, keep, perRow ? tops.rows[i] : -1, best, ((i - i0) / kQ | 0) * cols);
  }
  let top = tops.top;
  if (top === undefined) {
    top = 0;
    if (kind === 'max') for (const m of best) if (m > top) top = m;
  }
  let masked = null;
  for (let c = 0; c < best.length; c++) {
    if (best[c] < 0) {
      (masked ??= new Uint8Array(best.length))[c] = 1;
      best[c] = 0;
    } else if (!perRow) best[c] = colorPosition(kind, best[c], top);
  }
  return { positions: best, masked, rows, cols, top };
}

// Row cells j0…end−1 (from `row` in weights) in blocks of kK into best[out…]: each block's
// largest kept weight, or with a row top ≥ 0 its position on the row scale. Alone, as V8
// optimises it best; without a key mask or row scale, a tight loop (~2× faster at 8192²).
function rowBlocks(weights, row, j0, end, kK, keep, top, best, out) {
  if (!keep && top < 0) {
    for (let b = out, j = row + j0, e = row + end; j < e; b++) {
      let m = best[b];
      for (const stop = Math.min(e, j + kK); j < stop; j++) {
        const w = weights[j];
        m = w > m ? w : m;
      }
      best[b] = m;
    }
    return;
  }
  for (let b = out, j = j0; j < end; b++) {
    let m = -1;
    for (const stop = Math.min(end, j + kK); j < stop; j++)
      if (weights[row + j] > m && !(keep && keep[j] === 0)) m = weights[row + j];
    // Within a row every scale grows with the weight: the block's largest weight has its largest position.
    if (top >= 0 && m >= 0) m = colorPosition('row', m, top);
    if (m > best[b]) best[b] = m;
  }
}

/** Positions of a rows×cols image pooled (largest) into at most `size` blocks a side: the minimap's. */
export function shrink({ positions, rows, cols }, size) {
  const k = Math.max(1, Math.ceil(Math.max(rows, cols) / size));
  return blockPositions(positions, cols, { i1: rows, kQ: k, kK: k });
}
