// Colour positions of a weight table in blocks, for the heatmap at any length: the whole table
// downsampled (the overview, at most OVERVIEW blocks a side, drawn at zoom 1 and in the
// minimap) and a window of it at full resolution (what a zoomed view shows). A block takes its
// largest position, not the mean: a thin band (a diagonal, a sink column) or one strong cell
// stays visible in an 8192² table, where a mean would fade it into the background. A block is
// masked (hatched) only when every one of its cells is. Each row is read once, a causal row only
// up to its last kept key: no n²-sized image, copy or mask is made.
import { colorPosition } from './color-scale.js';
import { causalEnd } from './compute.js';

/** The overview's longest side in blocks (a 2048² image: 16 MB, where 8192² would be 256 MB). */
export const OVERVIEW = 2048;

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
    const out = ((i - i0) / kQ | 0) * cols, row = i * nK, end = Math.min(j1, causalEnd(masks, i, nK));
    const top = perRow ? tops.rows[i] : 0;
    for (let b = out, j = j0; j < end; b++) {
      let m = -1;
      const stop = Math.min(end, j + kK);
      if (keep) for (; j < stop; j++) { if (weights[row + j] > m && keep[j] !== 0) m = weights[row + j]; }
      else for (; j < stop; j++) if (weights[row + j] > m) m = weights[row + j];
      // Within a row every scale grows with the weight: the block's largest weight has its largest position.
      if (perRow && m >= 0) m = colorPosition('row', m, top);
      if (m > best[b]) best[b] = m;
    }
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

/** Positions of a rows×cols image pooled (largest) into at most `size` blocks a side: the minimap's. */
export function shrink({ positions, rows, cols }, size) {
  const k = Math.max(1, Math.ceil(Math.max(rows, cols) / size));
  return blockPositions(positions, cols, { i1: rows, kQ: k, kK: k });
}
