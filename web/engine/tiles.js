// The relaxed build's two register tiles (4 × 2, 6 × 2: cpp/src/kernels/blocked.hpp) give the same
// bits; the faster depends on the engine (6 × 2: ~0.7× in Node 20, ~1.1× in Chromium 156). Time an
// attention call with each, interleaved (which also warms the kernels up), and keep the faster.

// Warm-up: single calls (optimised code arrives after a few; a shape still in baseline code when
// timed just loses). 6 × 2 must be ≥ 2 % faster at best (the best of each is what load from
// other processes disturbs least). A sample: h = 1, n = 384, d = 64, two calls (~2 ms: 20 steps of
// a browser's 0.1 ms clock; the tiles are most of the time from n ≈ 384). ~26 calls in all.
const WARMUP_ROUNDS = 3, ROUNDS = 5, WIN = 0.98;
const HEADS = 1, N = 384, D = 64, CALLS = 2;
// Node 20's V8 (11.3) spills 6 × 2: not timed there.
const v8Major = Number(globalThis.process?.versions?.v8?.split('.')[0]);
const knownSlowWide = v8Major > 0 && v8Major < 12;

// Calls of at least this many flops choose the tiles first (chooseTilesFor): ~4 ms of work in one
// thread here, so the ~30 ms choice is paid once, by a call where the tiles matter, and never by
// pages that only draw small figures (h = 8, n = 256, d = 64 is the smallest such call).
export const TILE_CHOICE_FLOPS = 2 ** 27;
const chosen = new WeakSet();

/** Chooses the tiles of `module` once, before its first call of ≥ TILE_CHOICE_FLOPS flops. */
export function chooseTilesFor(module, flops) {
  if (flops < TILE_CHOICE_FLOPS || chosen.has(module)) return;
  chosen.add(module);
  chooseTiles(module);
}

const choices = [];
/** The choices made so far, first first (for benchmark reports). */
export const tileChoices = () => choices.slice();

/**
 * Sets the faster shape on `module`; returns { wide, ms: [narrow, wide] (best of each; null when
 * not timed), rounds }, or null for builds with one shape. ~30 ms, once per module. `timed`
 * (tests): time even where 6 × 2 is known slower.
 */
export function chooseTiles(module, { clock = () => performance.now(), timed = !knownSlowWide } = {}) {
  if (!module.hasWideTiles?.()) return null;
  const floats = HEADS * N * D;
  const base = module._malloc(4 * floats * 4) >>> 0;  // unsigned (heap.js)
  if (!base) return null;  // keep the default shape
  const times = [[], []];
  try {
    const heap = module.HEAPF32.subarray(base / 4, base / 4 + 3 * floats);
    for (let i = 0; i < heap.length; i++) heap[i] = ((i * 7919) % 1024) / 512 - 1;  // q, k, v
    const call = {
      q: base, k: base + 4 * floats, v: base + 8 * floats, keyMask: 0, output: base + 12 * floats,
      weights: 0, scores: 0, heads: HEADS, nQ: N, nK: N, dK: D, dV: D, scale: 1 / Math.sqrt(D),
      causal: false, simd: true,
    };
    const sample = (wide, calls = CALLS) => {
      module.setWideTiles(wide);
      const t0 = clock();
      for (let c = 0; c < calls; c++) module.attention(call);
      return clock() - t0;
    };
    for (let i = 0; i < WARMUP_ROUNDS; i++) sample(false, 1), timed && sample(true, 1);
    for (let r = 0; r < ROUNDS && timed; r++) {
      for (const wide of r % 2 ? [true, false] : [false, true]) times[+wide].push(sample(wide));
    }
  } finally {
    module._free(base);
  }
  const best = times.map((t) => Math.min(...t));
  const rounds = times[0].length;
  const wide = rounds > 0 && best[1] < WIN * best[0];
  module.setWideTiles(wide);
  const choice = { wide, ms: rounds ? best : null, rounds };
  choices.push(choice);
  return choice;
}
