// The relaxed-SIMD build carries two shapes of the attention kernels' register tiles (4 × 2 and
// 6 × 2, cpp/src/kernels/blocked.hpp) that give bit-identical results; which one runs faster
// depends on the engine's code generator (Node 20's V8 11.3 spills the wide tile and runs it at
// ~0.7× the speed; Chromium 156's V8 runs it ~1.1–1.17× faster). So the module times both on
// in-cache blocks, interleaved, and keeps the faster. The warm-up also gets both tiles V8's
// optimised code before the first real call. Only the speed depends on the outcome.

const WARMUP_ROUNDS = 2;
const MAX_ROUNDS = 8;
// A clear winner (Node 20: the wide tile at ~0.7× the speed) ends the timing early.
const DECISIVE = 0.85;
// ~75 MFLOP per sample (~2 ms): 20 steps of a browser's 100 µs coarsened clock.
const BLOCKS = 64;

/**
 * Picks the faster tile shape for `module` (an engine or model module) and returns
 * { wide, ms: [narrow, wide], rounds } (the best time of each), or null when the build has one
 * shape. Costs ~10 ms (a clear winner) to ~35 ms (close times) once per module.
 */
export function chooseTiles(module, { blocks = BLOCKS, clock = () => performance.now() } = {}) {
  if (!module.hasWideTiles?.()) return null;
  const best = [Infinity, Infinity];
  const sample = (wide) => {
    const t0 = clock();
    module.tileProbe(wide, blocks);
    return clock() - t0;
  };
  for (let i = 0; i < WARMUP_ROUNDS; i++) sample(false), sample(true);
  let rounds = 0;
  while (rounds < MAX_ROUNDS) {
    for (const wide of rounds % 2 ? [true, false] : [false, true])
      best[+wide] = Math.min(best[+wide], sample(wide));
    rounds++;
    if (rounds >= 2 && Math.min(...best) < DECISIVE * Math.max(...best)) break;
  }
  const wide = best[1] < best[0];
  module.setWideTiles(wide);
  return { wide, ms: best, rounds };
}
