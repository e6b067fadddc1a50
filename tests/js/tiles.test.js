// The relaxed build's register-tile choice (web/engine/tiles.js): made once per module, by the
// first call of a Lens large enough for the tiles to matter (never by small ones, nor at load),
// reported by tileChoices(), and invisible in the results: both shapes give the same bits through
// the module's attention call. Builds with one shape report no choice. The relaxed part needs
// `node --experimental-wasm-relaxed-simd` (scripts/test.sh runs this file with it too); with
// ATTNLENS_TEST_BUILDS naming relaxed, a runtime without it is a failure, not a skip.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { instantiate, relaxedSimdSupported } from '../../web/engine/load.js';
import { TILE_CHOICE_FLOPS, chooseTiles, tileChoices } from '../../web/engine/tiles.js';
import { Lens } from '../../web/engine/lens.js';
import * as ref from './reference.js';

const relaxed = relaxedSimdSupported();
if (process.env.ATTNLENS_TEST_BUILDS?.split(',').includes('relaxed') && !relaxed)
  throw new Error('ATTNLENS_TEST_BUILDS names relaxed, but this runtime has no relaxed SIMD');
// The relaxed tests belong to the relaxed pass (where their absence is the failure above), as in
// attention.test.js: a runtime without relaxed SIMD does not list them, rather than skip them.
const relaxedIt = relaxed ? it : () => {};

// Output-only attention on the module's heap: [heads, n, d] inputs, the output copied out.
function attention(module, { heads, nQ, nK, d, causal }, q, k, v) {
  const bytes = (x) => x.length * 4;
  const out = heads * nQ * d;
  const base = module._malloc(bytes(q) + bytes(k) + bytes(v) + out * 4);
  try {
    const [aq, ak, av, ao] = [base, base + bytes(q), base + bytes(q) + bytes(k), base + bytes(q) + bytes(k) + bytes(v)];
    module.HEAPF32.set(q, aq / 4);
    module.HEAPF32.set(k, ak / 4);
    module.HEAPF32.set(v, av / 4);
    const error = module.attention({ q: aq, k: ak, v: av, keyMask: 0, output: ao, weights: 0, scores: 0, heads, nQ, nK,
      dK: d, dV: d, scale: 1 / Math.sqrt(d), causal, simd: true });
    assert.equal(error, '');
    return module.HEAPF32.slice(ao / 4, ao / 4 + out);
  } finally {
    module._free(base);
  }
}

describe('register tiles', () => {
  it('a build with one tile shape makes no choice', async () => {
    const before = tileChoices().length;
    const simd = await instantiate('simd');
    assert.equal(simd.hasWideTiles(), false);
    assert.equal(chooseTiles(simd), null);
    simd.setWideTiles(true);
    assert.equal(simd.wideTiles(), false);
    assert.equal(tileChoices().length, before);
  });

  relaxedIt('the relaxed build chooses on its first large call, and both shapes give the same bits', async () => {
    const before = tileChoices().length;
    const module = await instantiate('relaxed');
    assert.equal(module.hasWideTiles(), true);
    assert.equal(tileChoices().length, before, 'loading the module chooses nothing');
    const lens = new Lens(module, true, 'relaxed');
    // Output only, h = 2, d = 64: 2·h·n²·128 flops; n = 128 is under the threshold, n = 256 over it.
    const call = (n) => {
      const x = ref.uniform(2 * n * 64, n);
      return lens.attention(x, x, x, { dK: 64, heads: 2, weights: false });
    };
    assert.ok(2 * 2 * 128 * 128 * 128 < TILE_CHOICE_FLOPS && 2 * 2 * 512 * 512 * 128 >= TILE_CHOICE_FLOPS);
    call(128);
    lens.multiHead(ref.uniform(64 * 32, 9), { dModel: 32, heads: 2, wQ: ref.uniform(32 * 32, 10), wK: ref.uniform(32 * 32, 11), wV: ref.uniform(32 * 32, 12) });
    assert.equal(tileChoices().length, before, 'small calls choose nothing');
    call(512);
    call(512);
    const choices = tileChoices();
    assert.equal(choices.length, before + 1);  // the first large call chose, once
    const choice = choices.at(-1);
    assert.equal(typeof choice.wide, 'boolean');
    assert.equal(module.wideTiles(), choice.wide);
    // Node 20's V8 is known to spill the wide tile: no timing, the default shape; elsewhere timed.
    if (Number(process.versions.v8.split('.')[0]) < 12) assert.deepEqual(choice, { wide: false, ms: null, rounds: 0 });
    else assert.ok(choice.rounds >= 3 && choice.ms.every((ms) => ms > 0 && Number.isFinite(ms)), JSON.stringify(choice));

    // Shapes that leave partial key panels, query blocks and P·V tiles, causal or not.
    for (const shape of [{ heads: 2, nQ: 131, nK: 101, d: 64, causal: false }, { heads: 1, nQ: 97, nK: 97, d: 40, causal: true }]) {
      const q = ref.uniform(shape.heads * shape.nQ * shape.d, 1);
      const k = ref.uniform(shape.heads * shape.nK * shape.d, 2);
      const v = ref.uniform(shape.heads * shape.nK * shape.d, 3);
      module.setWideTiles(false);
      const narrow = attention(module, shape, q, k, v);
      module.setWideTiles(true);
      assert.equal(module.wideTiles(), true);
      const wide = attention(module, shape, q, k, v);
      assert.deepEqual(new Uint32Array(wide.buffer), new Uint32Array(narrow.buffer), JSON.stringify(shape));
      const want = ref.attention(q, k, v, { ...shape, dK: shape.d, dV: shape.d });
      assert.ok(ref.maxAbsDiff(wide, want.output) < 1e-5, JSON.stringify(shape));
    }
    module.setWideTiles(choice.wide);
  });

  // The timing itself, which Node 20 skips by default (chooseTiles's `timed` option forces it):
  // on the real clock it takes its rounds and picks one of the two shapes; on a clock where one
  // shape is faster it picks that one (a wide shape less than 2 % faster keeps the default); the Lens's results
  // are the same bits whichever it picked.
  relaxedIt('the timed choice: rounds on the real clock, the faster shape on a given clock, the same bits either way', async () => {
    const module = await instantiate('relaxed');
    const lens = new Lens(module, true, 'relaxed');
    const x = ref.uniform(2 * 512 * 64, 21);
    const call = () => lens.attention(x, x, x, { dK: 64, heads: 2, weights: false }).output;
    call();  // the module's own first-large-call choice, made before the ones below
    const before = tileChoices().length;
    const real = chooseTiles(module, { timed: true });
    assert.equal(tileChoices().length, before + 1, 'one timed choice, one report');
    assert.deepEqual(tileChoices().at(-1), real);
    assert.equal(typeof real.wide, 'boolean');
    assert.equal(real.rounds, 5);
    assert.equal(real.ms.length, 2);
    assert.ok(real.ms.every((ms) => ms > 0 && Number.isFinite(ms)), JSON.stringify(real));
    assert.equal(real.wide, real.ms[1] < 0.98 * real.ms[0], JSON.stringify(real));
    assert.equal(module.wideTiles(), real.wide);

    // A clock that advances by the current shape's cost on every reading: each sample lasts one cost.
    const clockFor = (narrowMs, wideMs) => {
      let t = 0;
      return () => (t += module.wideTiles() ? wideMs : narrowMs);
    };
    const results = [];
    for (const [narrowMs, wideMs, wide] of [[200, 100, true], [100, 200, false], [100, 99, false], [100, 97, true]]) {
      const choice = chooseTiles(module, { timed: true, clock: clockFor(narrowMs, wideMs) });
      assert.deepEqual(choice, { wide, ms: [narrowMs, wideMs], rounds: 5 }, `${narrowMs} vs ${wideMs}`);
      assert.equal(module.wideTiles(), wide);
      results.push({ wide, out: call() });
      assert.equal(module.wideTiles(), wide, 'a later call keeps the choice');
    }
    assert.equal(tileChoices().length, before + 5, 'each chooseTiles call reports once');
    assert.deepEqual(results.map((r) => r.wide), [true, false, false, true]);
    for (const r of results.slice(1))
      assert.deepEqual(new Uint32Array(r.out.buffer, r.out.byteOffset, r.out.length),
        new Uint32Array(results[0].out.buffer, results[0].out.byteOffset, results[0].out.length));
    const want = ref.attention(x, x, x, { heads: 2, nQ: 512, nK: 512, dK: 64, dV: 64 });
    assert.ok(ref.maxAbsDiff(results[0].out, want.output) < 1e-5);
  });
});
